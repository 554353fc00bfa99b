"""`askwith ingest` never mirrors a workspace whose memory is searched live: one clear line, exit code 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import _register_all, app
from bot.errors import LiveMemoryWorkspaceError, UnknownWorkspaceError


ROOT = Path(__file__).resolve().parents[3]


def test_ingest_of_a_live_workspace_prints_one_clear_line_and_fails(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKWITH_")}
    env.update(ASKWITH_DATA_DIR=str(tmp_path / "data"), ASKWITH_SLACK_MEMORY="live", COLUMNS="300")
    done = subprocess.run(
        [sys.executable, "-m", "bot", "ingest", "--workspace", "slack:T0123"],
        cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "live" in lines[0] and "slack:T0123" in lines[0]
    assert not (tmp_path / "data" / "workspaces").exists()  # refused before any workspace was opened


REFUSALS = [("live", LiveMemoryWorkspaceError), ("mirror", UnknownWorkspaceError)]


@pytest.mark.parametrize(("memory", "refusal"), REFUSALS)
def test_only_a_live_source_is_refused(
    memory: str, refusal: type[Exception], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASKWITH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ASKWITH_SLACK_MEMORY", memory)
    _register_all()
    result = CliRunner().invoke(app, ["ingest", "--workspace", "slack:T0123"])
    assert result.exit_code != 0 and type(result.exception) is refusal, result.output
