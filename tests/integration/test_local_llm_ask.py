"""One real ask on the real local model: `askwith ask` on the bundled acme workspace, with ASKWITH_LOCAL_LLM=smollm2.

askwith starts llama.cpp's server from the packaged GGUF, every call goes through the real `openai` client, and the
privacy split is on with the same local model as the private one (one server serves both roles). SmolLM2-135M
cannot reason: the test checks that the ask terminates (an answer, or a recorded user-readable failure) and leaves
a transcript, never what it answers. Turns and reply lengths are capped to keep it to a few minutes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from bot.asks import models
from bot.asks.read_models.transcripts import load_transcript
from bot.cli import _register_all, app
from bot.settings import Settings
from bot.store.db import Database
from tests.integration.test_local_llm_real import _extra_missing


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(_extra_missing()), reason=f"the local-llm extra is not installed ({_extra_missing()} missing)"
    ),
]

QUESTION = "When is bob at the dentist?"


def local_env(data_dir: Path) -> dict[str, str]:
    return {
        "ASKWITH_DATA_DIR": str(data_dir),
        "ASKWITH_EMBEDDER": "hash",
        "ASKWITH_LOCAL_LLM": "smollm2",
        "ASKWITH_PRIVATE_LOCAL_LLM": "smollm2",
        "ASKWITH_MAX_TURNS": "2",
        "ASKWITH_RECURSION_DEPTH": "0",
        "ASKWITH_LLM_MAX_TOKENS": "160",
        "ASKWITH_LLM_TEMPERATURE": "0",
        "ASKWITH_LLM_MAX_RETRIES": "1",
        "ASKWITH_LLM_TIMEOUT_SECONDS": "240",
        "COLUMNS": "200",
    }


async def recorded(data_dir: Path) -> tuple[models.Ask, list[models.Turn], list[models.LLMCall]]:
    db = await Database.open(Settings(data_dir=data_dir))
    try:
        transcript = await load_transcript(db, 1)
        async with db.session() as session:
            turns = list((await session.execute(select(models.Turn))).scalars())
        return transcript.ask, turns, transcript.calls
    finally:
        await db.close()


def test_askwith_ask_on_the_local_model_terminates_with_a_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ASKWITH_DATABASE_URL", "ASKWITH_LLM_BASE_URL", "ASKWITH_PRIVATE_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    data_dir = tmp_path / "data"
    _register_all()

    result = CliRunner().invoke(
        app, ["ask", "--workspace", "acme", "--as", "alice", "--with", "bob", QUESTION], env=local_env(data_dir)
    )

    assert result.exit_code == 0, result.output
    assert "ask #1" in result.output and "cost:" in result.output
    ask, turns, calls = asyncio.run(recorded(data_dir))
    # an answer (supported or not by cited messages), or a failure the requester can read
    assert ask.status in ("done", "unsupported", "failed") and ask.final_text
    assert ask.answer or ask.failure
    assert turns and all(turn.data["agent"] in ("alice", "bob") for turn in turns)
    assert {"think", "act"} & {call.purpose for call in calls}
    assert {call.model for call in calls} == {"smollm2"}
    assert ask.llm_calls == len(calls) > 0 and ask.prompt_tokens > 0
