"""`askwith ask` with a colleague whose share policy is `ask`, as a real process.

Before: nobody was asked; the command sat silent for ASKWITH_APPROVAL_TIMEOUT_SECONDS (10 minutes) and then said the
colleague "did not approve". After: on a terminal, the colleague is asked right there (approve → the fact is shared);
with no terminal, the command says at once why nothing was shared and that `askwith serve` takes approvals."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from adapters.local.workspace import LocalWorkspace
from bot.platform.port import SharePolicy
from bot.store.world import MemberPolicy
from tests.e2e.cli_helpers import ROOT, cli_env
from tests.fakes.asks import QUESTION, two_fact_world


def _world_file(tmp_path: Path) -> Path:
    path = tmp_path / "ws.json"
    LocalWorkspace(two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)}), path=path).save()
    return path


def _ask(tmp_path: Path, stdin: int) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "bot", "ask", "--workspace", str(_world_file(tmp_path)), "--as", "alice",
               "--with", "bob", "--scripted", QUESTION]  # fmt: skip
    return subprocess.run(
        command, cwd=ROOT, env=cli_env(tmp_path / "data"), stdin=stdin, capture_output=True, text=True, timeout=240
    )


def test_without_a_terminal_it_says_so_at_once(tmp_path: Path) -> None:
    result = _ask(tmp_path, subprocess.DEVNULL)

    assert result.returncode == 0, result.stderr
    flat = " ".join(result.stdout.split())
    assert "bob's share policy is 'ask'" in flat and "askwith serve" in flat
    assert "14 March" not in flat  # nothing of bob's was shared


def test_on_a_terminal_the_colleague_approves_there(tmp_path: Path) -> None:
    main, terminal = pty.openpty()
    try:
        # bob answers both prompts, his agent's turn and its closing statement (kept by the terminal until read)
        os.write(main, b"y\ny\n")
        result = _ask(tmp_path, terminal)
    finally:
        os.close(main)
        os.close(terminal)

    assert result.returncode == 0, result.stderr
    assert "share this?" in result.stdout and "14 March" in result.stdout
    assert "there is no terminal" not in result.stdout
