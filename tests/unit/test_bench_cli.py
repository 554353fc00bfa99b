from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from bot.cli import bench


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
