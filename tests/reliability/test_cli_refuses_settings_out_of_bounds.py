"""Numbers that make askwith hang or do nothing are refused at start, in one line naming the variable.

Before: `ASKWITH_LLM_CONCURRENCY=0` made every LLM call wait forever; zero or negative turns, depth and time-outs were
accepted. After: the real `askwith` process exits 1 at once with one line naming the setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
REFUSED = [
    ("ASKWITH_LLM_CONCURRENCY", "0"),
    ("ASKWITH_MAX_TURNS", "0"),
    ("ASKWITH_MAX_TURNS", "-3"),
    ("ASKWITH_RECURSION_DEPTH", "-1"),
    ("ASKWITH_LLM_TIMEOUT_SECONDS", "0"),
    ("ASKWITH_APPROVAL_TIMEOUT_SECONDS", "-5"),
    ("ASKWITH_WORKER_STALE_SECONDS", "0"),
]


@pytest.mark.parametrize(("env", "value"), REFUSED)
def test_the_cli_refuses_the_value_in_one_line(env: str, value: str, tmp_path: Path) -> None:
    environ = {**os.environ, env: value, "ASKWITH_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    result = subprocess.run(
        [sys.executable, "-m", "bot", "ask", "--workspace", "acme", "--as", "alice", "--with", "bob", "--scripted",
         "When is the launch?"],
        cwd=tmp_path, env={**environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and env in lines[0] and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_accepted_edges_still_load() -> None:
    from bot.settings import Settings

    settings = Settings.load(env={"ASKWITH_RECURSION_DEPTH": "0", "ASKWITH_LLM_MAX_RETRIES": "0"}, env_file=None)
    assert settings.recursion_depth == 0 and settings.llm_max_retries == 0
