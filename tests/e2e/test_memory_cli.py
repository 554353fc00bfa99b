from __future__ import annotations

from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner, Result

from bot.cli import ingest, memory
from bot.errors import UnknownMemberError, WorkspaceNotIngestedError
from tests.e2e.cli_helpers import askwith, cli_env


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    """The ingest and memory commands on an app of their own, writing to a wide console."""
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Sub-commands only."""

    ingest.register(app)
    memory.register(app)
    monkeypatch.setattr(memory, "out", Console(width=200))
    monkeypatch.setattr(ingest, "out", Console(width=200))
    return app


def invoke(app: typer.Typer, data_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(app, list(args), env=cli_env(data_dir))


@pytest.fixture
def acme(cli: typer.Typer, tmp_path: Path) -> Path:
    result = invoke(cli, tmp_path, "ingest", "--workspace", "acme")
    assert result.exit_code == 0, result.output
    return tmp_path


def search(cli: typer.Typer, data_dir: Path, *args: str) -> str:
    result = invoke(cli, data_dir, "memory", "search", "--workspace", "acme", *args)
    assert result.exit_code == 0, result.output
    return result.output


def test_each_member_sees_only_their_own_memory(cli: typer.Typer, acme: Path) -> None:
    bob = search(cli, acme, "--as", "bob", "thursday")
    assert "hit(s) for thursday (date: thursday) in what bob's agent can see" in bob
    assert "1. #alice-bob" in bob and "bob: Thursday I'm at the dentist" in bob
    carol = search(cli, acme, "--as", "@carol", "thursday", "dentist")
    assert "at the dentist" not in carol  # that line is in Alice and Bob's DM only
    assert "Room 4B is booked" in carol
    # Hybrid search always finds the nearest lines by meaning, but never one erin cannot see.
    assert "at the dentist" not in search(cli, acme, "--as", "erin", "dentist")
    lexical = search(cli, acme, "--as", "erin", "--lexical", "dentist")
    assert lexical.strip() == "Nothing erin can see matches dentist."


def test_filters_phrases_and_context(cli: typer.Typer, acme: Path) -> None:
    out = search(cli, acme, "--as", "alice", "--channel", "launch-team", "--context", "0", '"press kit" firmware')
    assert 'for "press kit" firmware' in out
    assert out.count("#launch-team") == 3 and "#general" not in out
    assert "> 2026-11-16 10:00 dave: Launch checklist" in out
    with_context = search(cli, acme, "--as", "bob", "--context", "1", "--limit", "1", "dentist")
    assert "alice: Bob, are you around Thursday" in with_context  # the neighbour before the hit
    late = search(cli, acme, "--as", "bob", "--since", "2026-11-16T12:00", "--sender", "carol", "thursday")
    assert "customer workshop" in late and "dentist" not in late
    none_yet = search(cli, acme, "--as", "bob", "--until", "2026-11-15", "thursday")
    assert none_yet.startswith("Nothing bob can see")


def test_fuzzy_search_shows_sessions_with_their_summaries(cli: typer.Typer, acme: Path) -> None:
    out = search(cli, acme, "--as", "bob", "--fuzzy", "--top-k", "2", "dentist appointment on thursday")
    assert out.count("similarity") == 2
    assert "extractive summary (no LLM configured)" in out
    assert "bob: Thursday I'm at the dentist" in out  # --context 1 (default) expands the session
    carol = search(cli, acme, "--as", "carol", "--fuzzy", "--context", "0", "dentist appointment on thursday")
    assert "at the dentist" not in carol and "#alice-bob" not in carol


@pytest.mark.parametrize(
    "question",
    [
        "When's Bob free on Thursday?",
        '"unbalanced quote',
        "what's the 'plan",
        "🎉🚀",
        "מה התקציב?",
        "NEAR(press kit) OR text:* AND -firmware ^b",
        "'); DROP TABLE message; --",
        "yesterday",
    ],
)
def test_any_typed_question_is_searched_without_a_traceback(cli: typer.Typer, acme: Path, question: str) -> None:
    for mode in ((), ("--lexical",), ("--fuzzy",)):
        result = invoke(cli, acme, "memory", "search", "-w", "acme", "--as", "alice", *mode, question)
        assert result.exit_code == 0, (mode, result.output, result.exception)
        assert "Traceback" not in result.output


def test_a_question_finds_its_answer_with_its_neighbours(cli: typer.Typer, acme: Path) -> None:
    out = search(cli, acme, "--as", "alice", "When's Bob free on Thursday?")
    assert "for bob free thursday (date: on Thursday) in" in out  # bob is not the asker: his name is a word
    assert "> 2026-11-16 11:05 bob: Thursday I'm at the dentist" in out
    assert "alice: Bob, are you around Thursday" in out  # its neighbour, shown by default


def test_bad_requests_are_rejected(cli: typer.Typer, acme: Path, tmp_path: Path) -> None:
    unknown = invoke(cli, acme, "memory", "search", "-w", "acme", "--as", "zed", "thursday")
    assert isinstance(unknown.exception, UnknownMemberError)
    fresh = invoke(cli, tmp_path / "fresh", "memory", "search", "-w", "acme", "--as", "bob", "thursday")
    assert isinstance(fresh.exception, WorkspaceNotIngestedError)
    mixed = invoke(cli, acme, "memory", "search", "-w", "acme", "--as", "bob", "--fuzzy", "--sender", "alice", "x")
    assert mixed.exit_code == 2 and "filter clear memory" in mixed.output
    bad_date = invoke(cli, acme, "memory", "search", "-w", "acme", "--as", "bob", "--since", "friday", "x")
    assert bad_date.exit_code == 2 and "ISO date" in bad_date.output


def test_an_unknown_member_is_one_clear_line(acme: Path) -> None:
    result = askwith(acme, "memory", "search", "--workspace", "acme", "--as", "zed", "thursday")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == "error: There is no member called 'zed' in this workspace."


def test_a_huge_message_is_printed_folded(cli: typer.Typer, tmp_path: Path) -> None:
    from tests.fakes.asks import two_fact_world

    world = two_fact_world()
    huge = "zebra crossing budget " * 50_000  # 1.1 MB in one message (the red team pasted 5 MB)
    world.add_message("C-notes", "alice", huge)
    world_file = tmp_path / "huge.json"
    world.save(world_file)
    assert invoke(cli, tmp_path, "ingest", "--workspace", str(world_file)).exit_code == 0
    result = askwith(tmp_path, "memory", "search", "-w", str(world_file), "--as", "alice", "--lexical", "zebra")
    assert result.returncode == 0, result.stderr
    assert "more characters)" in result.stdout
    assert len(result.stdout) < 5_000, len(result.stdout)
