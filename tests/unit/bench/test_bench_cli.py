from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bot.cli import bench
from bot.cli.bench_run import _judge
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.settings import Settings


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("noop")(lambda: None)  # a second command keeps `bench` a sub-command group
    bench.register(app)
    return app


def test_bench_generate_writes_a_dataset_directory(tmp_path: Path) -> None:
    out = tmp_path / "easy"
    result = CliRunner().invoke(
        _app(), ["bench", "generate", "--dataset", "schedule-easy", "--seed", "3", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "30 items" in result.output
    assert json.loads((out / "dataset.json").read_text()) == {
        "dataset": "schedule-easy",
        "format": 1,
        "items": 30,
        "seed": 3,
    }
    assert len((out / "items.jsonl").read_text().splitlines()) == 30
    assert len(list((out / "worlds").glob("*.json"))) == 30
    assert (out / "card.md").read_text().startswith("# Schedule Easy")


def test_bench_generate_refuses_a_foreign_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = CliRunner().invoke(_app(), ["bench", "generate", "--dataset", "schedule-hard", "--out", str(tmp_path)])
    assert result.exit_code != 0
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_the_judge_is_another_model_by_default_and_a_same_model_judge_is_warned(
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = Settings(llm_base_url="http://127.0.0.1:9/v1", llm_model="small-model", bench_judge_model="gpt-4o")
    under_test = LLMClient(ScriptedBackend(lambda r: "", model="small-model"))
    judge = _judge(settings, under_test, scripted=False, wanted=True, model=None)
    assert judge is not None and judge.model == "gpt-4o" and "Warning" not in capsys.readouterr().out
    same = _judge(settings, under_test, scripted=False, wanted=True, model="small-model")
    assert same is under_test and "grades its own answers" in capsys.readouterr().out
    assert _judge(settings, under_test, scripted=True, wanted=True, model=None) is None
