"""FriendsTV through `askwith bench run` (one shared 140-member world, ingested once), and the full five-dataset
report. The shared session fixture ingests FriendsTV's 11,593 messages (sessions, hash embeddings) once: ~7 s."""

from __future__ import annotations

import json
from pathlib import Path

from bot.bench.generate import DATASETS
from tests.bench.test_bench_run_cli import check_scripted_run
from tests.fakes.bench_runs import ITEMS, BenchRuns, invoke


def test_friendstv_items_share_one_world_ingested_once(bench_runs: BenchRuns, bench_data_dir: Path) -> None:
    rows = check_scripted_run(bench_runs.run("friendstv"), "friendstv")
    assert sum(1 for r in rows if r["ingest_s"] > 0) == 1


def test_report_over_all_five_datasets(bench_runs: BenchRuns, bench_data_dir: Path, tmp_path: Path) -> None:
    runs = [bench_runs.run(name) for name in DATASETS]

    result = invoke(bench_runs.data, "bench", "report", *map(str, runs), "--out", str(tmp_path))

    assert result.exit_code == 0, result.output
    label, *scores = (tmp_path / "table1.csv").read_text().splitlines()[2].split(",")
    assert label == "scripted (not a quality figure)" and len(scores) == 5 and "" not in scores
    document = json.loads((tmp_path / "report.json").read_text())
    assert {row["dataset"] for row in document["cost"]} == set(DATASETS)
    assert all(row["items"] == ITEMS for row in document["cost"])
    assert (tmp_path / "scores.png").stat().st_size > 10_000 and (tmp_path / "cost.png").stat().st_size > 10_000
