"""Helpers for the bench tests: the CLI with a data directory of its own, datasets and scripted runs made once."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from typer.testing import CliRunner, Result

from bot.bench.generate import generate
from bot.bench.runner import DATABASE_FILE
from bot.cli import _register_all, app
from bot.settings import Settings


ITEMS = 2


def invoke(data_dir: Path, *args: str) -> Result:
    """`askwith ARGS` with its own data directory, hash embeddings and no model configured."""
    env = {"ASKWITH_DATA_DIR": str(data_dir), "ASKWITH_EMBEDDER": "hash", "ASKWITH_LLM_BASE_URL": None,
           "ASKWITH_DATABASE_URL": None, "ASKWITH_ABLATIONS": None, "COLUMNS": "250"}  # fmt: skip
    _register_all()
    return CliRunner().invoke(app, list(args), env=env)


def results(run_dir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((run_dir / "results").glob("*.json"))]


def asks_in(run_dir: Path) -> list[tuple[int, str]]:
    """(ask id, ablations as stored) of every ask in a run's database."""
    # closing(): sqlite3's own context manager only commits; a connection left to the garbage collector would
    # delete the WAL files at a random later moment (e.g. while another test copies the run directory).
    with closing(sqlite3.connect(run_dir / DATABASE_FILE)) as conn:
        return conn.execute("SELECT id, ablations FROM ask ORDER BY id").fetchall()


class BenchRuns:
    """Datasets and scripted runs under one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.settings = Settings.load(env_file=None)  # NP and FriendsTV read ASKWITH_BENCH_DATA_DIR

    def dataset(self, name: str) -> Path:
        directory = self.root / "datasets" / name
        if not (directory / "dataset.json").is_file():
            generate(name, 0, directory, self.settings)
        return directory

    def run(self, name: str) -> Path:
        """The scripted run of the first ITEMS items of `name` (made on first use)."""
        run_dir = self.root / "runs" / name
        if not (run_dir / "run.json").is_file():
            result = invoke(
                self.data, "bench", "run", "--dataset", str(self.dataset(name)), "--limit", str(ITEMS),
                "--concurrency", "2", "--scripted", "--out", str(run_dir),
            )  # fmt: skip
            assert result.exit_code == 0, result.output
            assert f"{ITEMS}/{ITEMS} items scored" in result.output and "NOT a quality figure" in result.output
        return run_dir
