"""`askwith bench run` and `askwith bench report` with the scripted stand-in model (Schedule and NP; FriendsTV and
the five-dataset report are in test_bench_friendstv_run.py)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from bot.bench.report import BEHAVIOUR_METRICS
from bot.bench.report_tables import FLOOR_ROWS
from bot.errors import BenchError, LLMNotConfiguredError
from tests.fakes.bench_runs import ITEMS, BenchRuns, asks_in, invoke, results


SCORERS = {"schedule-easy": "exact_count", "schedule-medium": "name_f1", "schedule-hard": "slot_iou",
           "np": "concise_match", "friendstv": "token_f1"}  # fmt: skip
SCHEDULE = ("schedule-easy", "schedule-medium", "schedule-hard")


def check_scripted_run(run_dir: Path, name: str) -> list[dict]:
    config = json.loads((run_dir / "run.json").read_text())
    assert config["dataset"] == name and config["scripted"] is True and config["judge"] is None
    rows = results(run_dir)
    assert [r["item_id"] for r in rows] == [f"{name}-{i:03d}" for i in range(ITEMS)]
    ask_ids = {ask_id for ask_id, _ in asks_in(run_dir)}
    for row in rows:
        # Every item's ask ran to an end: answered, answered without evidence it could share, or failed.
        assert row["ask_id"] in ask_ids and row["status"] in ("done", "unsupported", "failed")
        assert row["scorer"] == SCORERS[name] and 0.0 <= row["score"] <= 1.0
        assert row["llm_calls"] > 0 and row["prompt_tokens"] > 0 and row["completion_tokens"] > 0
        assert row["wall_s"] > 0 and 0 <= row["llm_s"] <= row["wall_s"]
        assert set(BEHAVIOUR_METRICS) <= row["behaviour"].keys()
    return rows


@pytest.mark.parametrize("name", [*SCHEDULE, "np"])
def test_scripted_run_asks_and_scores_the_first_items(
    bench_runs: BenchRuns, name: str, request: pytest.FixtureRequest
) -> None:
    if name == "np":
        request.getfixturevalue("bench_data_dir")  # skips without the source data
    rows = check_scripted_run(bench_runs.run(name), name)
    assert all(r["ingest_s"] > 0 for r in rows)  # a small world of its own per item


def test_a_rerun_skips_finished_items_and_asks_only_the_new_one(bench_runs: BenchRuns, tmp_path: Path) -> None:
    run_dir = tmp_path / "easy"
    shutil.copytree(bench_runs.run("schedule-easy"), run_dir)
    before = {p.name: p.read_bytes() for p in (run_dir / "results").iterdir()}
    dataset = str(bench_runs.dataset("schedule-easy"))

    result = invoke(bench_runs.data, "bench", "run", "--dataset", dataset, "--limit", "3", "--scripted",
                    "--out", str(run_dir))  # fmt: skip

    assert result.exit_code == 0, result.output
    assert "3/3 items scored" in result.output and "2 from an earlier run" in result.output
    assert len(asks_in(run_dir)) == 3  # the two finished items were not asked again
    after = {p.name: p.read_bytes() for p in (run_dir / "results").iterdir()}
    assert set(after) == set(before) | {"schedule-easy-002.json"}
    assert all(after[name] == content for name, content in before.items())


def test_ablations_are_recorded_with_the_run_every_ask_and_the_report(bench_runs: BenchRuns, tmp_path: Path) -> None:
    run_dir = tmp_path / "easy-no-infonav"
    args = ["bench", "run", "--dataset", str(bench_runs.dataset("schedule-easy")), "--limit", "2", "--scripted",
            "--out", str(run_dir)]  # fmt: skip

    result = invoke(bench_runs.data, *args, "--ablation", "no-infonav")

    assert result.exit_code == 0, result.output
    config = json.loads((run_dir / "run.json").read_text())
    assert config["ablations"] == ["no-infonav"] and config["setup_ablations"] == ["no-recursion"]
    # each ask carries the chosen ablation and the paper's Schedule setup (no bringing in further people)
    assert [json.loads(a) for _, a in asks_in(run_dir)] == [["no-infonav", "no-recursion"]] * 2
    for row in results(run_dir):
        assert row["ablations"] == ["no-infonav", "no-recursion"]
        assert row["behaviour"]["rationales_per_plan"] is None  # no plan without InfoNav
    # a run directory holds one configuration
    mixed = invoke(bench_runs.data, *args)
    assert isinstance(mixed.exception, BenchError) and "another configuration" in str(mixed.exception)

    full = bench_runs.run("schedule-easy")
    report = invoke(bench_runs.data, "bench", "report", str(full), str(run_dir), "--out", str(tmp_path / "r"),
                    "--split", "dev")  # fmt: skip
    assert report.exit_code == 0, report.output
    table1 = list(csv.reader((tmp_path / "r" / "table1.csv").open()))
    assert [row[0] for row in table1[1:4]] == [
        "paper: iAgents, GPT-4", "scripted (not a quality figure)", "scripted (not a quality figure) no-infonav",
    ]  # fmt: skip
    assert [row[0] for row in table1[4:]] == [row[0] for row in FLOOR_ROWS]  # floors beside the scores


def test_report_prints_the_tables_and_writes_csv_json_and_pngs(bench_runs: BenchRuns, tmp_path: Path) -> None:
    runs = [bench_runs.run(name) for name in SCHEDULE]
    out = tmp_path / "report"

    result = invoke(bench_runs.data, "bench", "report", *map(str, runs), "--out", str(out), "--split", "dev")

    assert result.exit_code == 0, result.output
    text = result.output
    assert "Figures over the dev split only" in " ".join(text.split()) and "split: dev" in text
    assert "Table 1" in text and "Table 3" in text and "Cost per item" in text and "NOT a quality figure" in text
    assert "paper: iAgents, GPT-4" in text and "56.67%" in text and "57.94%" in text
    assert "predict right" in text and "predict wrong" in text and "fake solved ratio" in text
    table1 = (out / "table1.csv").read_text().splitlines()
    assert table1[0] == "configuration,schedule-easy,schedule-medium,schedule-hard,np,friendstv"
    label, *scores = table1[2].split(",")
    assert label == "scripted (not a quality figure)" and scores[3:] == ["", ""] and "" not in scores[:3]
    document = json.loads((out / "report.json").read_text())
    assert document["scripted_configurations"] == ["scripted (not a quality figure)"]
    assert {row["dataset"] for row in document["cost"]} == set(SCHEDULE)
    assert len((out / "items.csv").read_text().splitlines()) == 1 + ITEMS * len(SCHEDULE)
    assert len((out / "behaviour.csv").read_text().splitlines()) == 1 + 3  # right, wrong, all
    assert "cited precision" in text and "Answer quality" in text
    quality = (out / "quality.csv").read_text().splitlines()
    assert quality[0].endswith("cited lines,cited precision") and len(quality) == 1 + len(SCHEDULE)
    for png in ("scores.png", "cost.png"):
        data = (out / png).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_reports_default_to_the_test_split_and_seed_0_is_dev(bench_runs: BenchRuns, tmp_path: Path) -> None:
    run_dir = bench_runs.run("schedule-easy")

    default = invoke(bench_runs.data, "bench", "report", str(run_dir), "--out", str(tmp_path / "r"))
    every = invoke(bench_runs.data, "bench", "report", str(run_dir), "--out", str(tmp_path / "all"), "--split", "all")
    test_run = invoke(bench_runs.data, "bench", "run", "--dataset", str(bench_runs.dataset("schedule-easy")),
                      "--scripted", "--split", "test", "--out", str(tmp_path / "run"))  # fmt: skip

    assert isinstance(default.exception, BenchError) and "No results of test items" in str(default.exception)
    assert "seeds below 100" in str(default.exception) and not (tmp_path / "r").exists()
    assert every.exit_code == 0, every.output
    assert json.loads((tmp_path / "all" / "report.json").read_text())["split"] == "all"
    assert isinstance(test_run.exception, BenchError) and "has no test items" in str(test_run.exception)


def test_without_a_model_and_without_scripted_nothing_runs(tmp_path: Path) -> None:
    result = invoke(tmp_path / "data", "bench", "run", "--dataset", "schedule-easy", "--limit", "1")
    assert isinstance(result.exception, LLMNotConfiguredError)
    assert "ASKWITH_LLM_BASE_URL" in str(result.exception)
    assert not (tmp_path / "data").exists()  # failed before generating or creating anything


def test_a_dataset_named_but_not_generated_is_generated_first(tmp_path: Path) -> None:
    result = invoke(tmp_path / "data", "bench", "run", "--dataset", "schedule-hard", "--limit", "1", "--scripted")
    assert result.exit_code == 0, result.output
    assert "generated schedule-hard (seed 0): 30 items" in result.output
    assert len(results(tmp_path / "data" / "bench" / "runs" / "schedule-hard-scripted")) == 1


def test_report_without_runs_says_so(tmp_path: Path) -> None:
    result = invoke(tmp_path / "data", "bench", "report")
    assert isinstance(result.exception, BenchError) and "askwith bench run" in str(result.exception)
