"""What a new user types and what chat text can do to their terminal, through the real `askwith` process.

Before: `--as Alice` failed (handles were case-sensitive), and a message carrying terminal control sequences (screen
clear, OSC 52 clipboard write) was printed raw by `askwith memory search`. After: handles match case-insensitively
(an exact match wins), and control characters print as visible escapes."""

from __future__ import annotations

from pathlib import Path

from adapters.local.workspace import LocalWorkspace
from tests.e2e.cli_helpers import askwith
from tests.fakes.asks import two_fact_world


HOSTILE = "launch party \x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07 at noon \x9b31m"


def _world_file(tmp_path: Path) -> Path:
    world = two_fact_world()
    world.add_message(world.dm("alice", "bob").id, "bob", HOSTILE)
    path = tmp_path / "ws.json"
    LocalWorkspace(world, path=path).save()
    return path


def test_handles_are_case_insensitive_and_chat_text_cannot_drive_the_terminal(tmp_path: Path) -> None:
    world_file = _world_file(tmp_path)
    data_dir = tmp_path / "data"
    assert askwith(data_dir, "ingest", "--workspace", str(world_file)).returncode == 0

    result = askwith(data_dir, "memory", "search", "--workspace", str(world_file), "--as", "Alice", "launch party")

    assert result.returncode == 0, result.stderr
    assert "launch party" in result.stdout
    assert not any(c in result.stdout for c in ("\x1b", "\x07", "\x9b"))
    assert "\\x1b[2J" in result.stdout and "\\x9b31m" in result.stdout


def test_an_ask_as_a_capitalised_handle_runs(tmp_path: Path) -> None:
    result = askwith(
        tmp_path / "data", "ask", "--workspace", str(_world_file(tmp_path)), "--as", "ALICE", "--with", "Bob",
        "--scripted", "What is the project code name?", timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "ask #1" in result.stdout and "\x1b[2J" not in result.stdout
