"""What the command line prints: askwith's own output, not libraries' routine INFO lines; and never a secret."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.e2e.cli_helpers import askwith
from tests.fakes.openai_server import FakeOpenAIServer


SECRETS = {
    "ASKWITH_LLM_API_KEY": "sk-test-9f8e7d6c5b4a-never-logged",
    "ASKWITH_LINK_SECRET": "link-secret-3c2b1a-never-logged",
    "SLACK_SIGNING_SECRET": "signing-secret-77aa-never-logged",
    "SLACK_CLIENT_SECRET": "client-secret-88bb-never-logged",
}


def test_library_info_lines_stay_out_of_the_default_output(tmp_path: Path) -> None:
    quiet = askwith(tmp_path, "transcripts", "list", ASKWITH_LOG_LEVEL="INFO")
    assert quiet.returncode == 0, quiet.stderr
    assert "Context impl" not in quiet.stderr and "non-transactional DDL" not in quiet.stderr
    debug = askwith(tmp_path / "debug", "transcripts", "list", ASKWITH_LOG_LEVEL="DEBUG")
    assert "Context impl SQLiteImpl" in debug.stderr  # still there for whoever debugs


async def test_secrets_in_the_environment_never_reach_the_output(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    """A real ask against an OpenAI-compatible endpoint that authenticates with the key, logging at DEBUG."""
    fake_openai.api_key = SECRETS["ASKWITH_LLM_API_KEY"]
    args = ("ask", "--workspace", "acme", "--as", "alice", "--with", "bob", "Which room is booked?")
    env = {**SECRETS, "ASKWITH_LLM_BASE_URL": fake_openai.base_url, "ASKWITH_LOG_LEVEL": "DEBUG"}
    result = await asyncio.to_thread(askwith, tmp_path, *args, **env)
    key = SECRETS["ASKWITH_LLM_API_KEY"]
    assert fake_openai.requests, result.stderr  # the secret was in use, not just present
    assert all(r.headers.get("Authorization") == f"Bearer {key}" for r in fake_openai.requests)
    output = result.stdout + result.stderr
    for name, secret in SECRETS.items():
        assert secret not in output, name
