"""`askwith ask` and `askwith transcripts` on the bundled sample workspace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from bot.asks.read_models.transcripts import load_transcript
from bot.cli import _register_all, app
from bot.errors import AskRejectedError
from bot.settings import Settings
from bot.store.db import Database, run
from bot.texts import rejection_texts


ROOT = Path(__file__).parent.parent.parent


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("ASKWITH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ASKWITH_EMBEDDER", "hash")
    monkeypatch.delenv("ASKWITH_DATABASE_URL", raising=False)
    monkeypatch.delenv("ASKWITH_LLM_BASE_URL", raising=False)
    # The module's console took its width from COLUMNS when first imported, maybe by another test of this process.
    monkeypatch.setattr("bot.cli.transcripts.out", Console(width=200))
    _register_all()
    return CliRunner()


ASK = ["ask", "--workspace", "acme", "--as", "alice", "--with", "bob", "--with", "carol", "--scripted"]


def test_scripted_ask_prints_answer_transcript_and_cost_then_transcripts_show_it(runner: CliRunner) -> None:
    question = "When is bob at the dentist and when is room 4B booked?"
    result = runner.invoke(app, [*ASK, question], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = result.output
    assert "Scripted demo model" in text and "NOT the quality" in text
    assert "ask #1" in text and "10:00-11:30" in text and "15:00 to 17:00" in text
    assert "alice ↔ bob" in text and "alice ↔ carol" in text and "plan: r1" in text and "history {" in text
    assert "cost: 11 LLM calls" in text and "prompt +" in text

    listed = runner.invoke(app, ["transcripts", "list"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0 and "When is bob at the dentist" in listed.output
    shown = runner.invoke(app, ["transcripts", "show", "1"], env={"COLUMNS": "200"})  # as alice, who asked
    assert shown.exit_code == 0, shown.output
    assert "consensus: agreed" in shown.output and "[m0000008]" in shown.output and "plan: r1" in shown.output
    assert "behaviour" not in shown.output and "bob's agent searched bob's messages" in shown.output
    prompts = runner.invoke(app, ["transcripts", "show", "1", "--prompts"], env={"COLUMNS": "200"})
    assert prompts.exit_code == 0, prompts.output
    assert "alice: think" in prompts.output and "its side of the consensus" not in prompts.output  # bob's are his
    as_bob = runner.invoke(app, ["transcripts", "show", "1", "--prompts", "--as", "bob"], env={"COLUMNS": "200"})
    assert "bob: think" in as_bob.output and "alice: think" not in as_bob.output
    assert "STATEMENT (your side" not in as_bob.output  # his closing statement's prompt is not kept in alice's record
    raw = runner.invoke(app, ["transcripts", "show", "1"], env={"COLUMNS": "200", "ASKWITH_ADMIN_RAW_PROMPTS": "true"})
    assert "behaviour" in raw.output and "history {" in raw.output
    assert "statement 2" in raw.output  # one statement per side: which calls each agent made is raw detail


def test_a_rejected_request_says_why(runner: CliRunner) -> None:
    result = runner.invoke(app, [*ASK[:5], "--with", "nobody", "--scripted", "Anything?"])
    assert isinstance(result.exception, AskRejectedError)
    assert str(result.exception) == rejection_texts.unknown_member("nobody")


def test_without_a_configured_model_ask_prints_one_clear_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKWITH_LLM")}
    env.update(ASKWITH_DATA_DIR=str(tmp_path / "data"), COLUMNS="300")
    done = subprocess.run(
        [sys.executable, "-m", "bot", "ask", "--workspace", "acme", "--as", "alice", "--with", "bob", "Hi?"],
        cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "ASKWITH_LLM_BASE_URL" in lines[0] and lines[0].startswith("error:")


def test_ask_on_a_fresh_data_dir_builds_fuzzy_memory_and_finds_hits(runner: CliRunner, tmp_path: Path) -> None:
    # Nothing was ingested before: `askwith ask` itself must index sessions, as `askwith ingest` does. (The sample
    # fits the evidence budget, so whole-history mode is switched off: the agents must search.)
    question = "When is bob at the dentist and when is room 4B booked?"
    result = runner.invoke(app, [*ASK, question], env={"ASKWITH_WHOLE_HISTORY": "false"})
    assert result.exit_code == 0, result.output

    async def fuzzy_hit_counts() -> list[int]:
        settings = Settings.load()
        db = await Database.open(settings)
        try:
            transcript = await load_transcript(db, 1)
        finally:
            await db.close()
        views = transcript.all_conversations()
        return [len(q.hit_ids) for v in views for qs in v.queries.values() for q in qs if q.kind == "fuzzy"]

    counts = run(fuzzy_hit_counts())
    assert counts and sum(counts) > 0
