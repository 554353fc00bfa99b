"""The report's arithmetic on hand-made results: Table 1 means, Table 3 splits, cost per item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.bench.report import PAPER_GPT4, Run, build_report, report_from_dict
from bot.bench.report_tables import quality_text
from bot.bench.results import ItemResult
from bot.bench.run_config import RunConfig


def config(dataset: str, *, ablations: tuple[str, ...] = (), scripted: bool = False) -> RunConfig:
    return RunConfig(dataset, f"/data/{dataset}", 0, "gpt-x", scripted, list(ablations), [], None)


def result(
    item: str, score: float, *, calls: int = 10, wall: float = 4.0, llm: float = 3.0, **behaviour
) -> ItemResult:  # noqa: ANN003
    return ItemResult(
        item_id=item, dataset="", question="q", gold="g", answer="a", status="done", failure=None, score=score,
        scorer="exact_count", score_detail={}, ask_id=1, ablations=[], llm_calls=calls, prompt_tokens=100 * calls,
        completion_tokens=10 * calls, llm_s=llm, wall_s=wall, ingest_s=0.0, behaviour=behaviour,
    )  # fmt: skip


def test_table1_is_the_mean_score_per_configuration_and_dataset() -> None:
    runs = [
        Run(Path("a"), config("schedule-easy"), [result("e1", 1.0), result("e2", 0.0), result("e3", 1.0)]),
        Run(Path("b"), config("np"), [result("n1", 1.0)]),
        Run(Path("c"), config("np", ablations=("no-infonav",)), [result("n1", 0.0), result("n2", 0.0)]),
        Run(Path("d"), config("np"), [result("n1", 0.0), result("n2", 1.0)]),  # a later run of n1 replaces it
    ]

    report = build_report(runs)

    assert report.labels == ["gpt-x", "gpt-x no-infonav"]
    assert report.datasets == list(PAPER_GPT4)
    assert report.table1["gpt-x"]["schedule-easy"].score == pytest.approx(2 / 3)
    assert report.table1["gpt-x"]["np"].score == 0.5 and report.table1["gpt-x"]["np"].items == 2
    assert report.table1["gpt-x no-infonav"]["np"].score == 0.0
    assert "friendstv" not in report.table1["gpt-x"]


def test_behaviour_is_split_into_predicted_right_wrong_and_all() -> None:
    items = [
        result("1", 1.0, rationales_per_plan=4, solved_ratio=1.0, fake_solved_ratio=0.0, consensus_ratio=1.0),
        result("2", 0.6, rationales_per_plan=6, solved_ratio=0.5, fake_solved_ratio=None, consensus_ratio=0.5),
        result("3", 0.2, rationales_per_plan=8, solved_ratio=0.25, fake_solved_ratio=0.5, consensus_ratio=None),
    ]

    report = build_report([Run(Path("a"), config("schedule-hard"), items)])

    right, wrong, every = (report.behaviour["gpt-x"][s] for s in ("predict right", "predict wrong", "all"))
    assert report.behaviour_items["gpt-x"] == {"predict right": 2, "predict wrong": 1, "all": 3}
    assert (
        right["rationales_per_plan"] == 5 and wrong["rationales_per_plan"] == 8 and every["rationales_per_plan"] == 6
    )
    assert right["fake_solved_ratio"] == 0.0  # items without the statistic are left out of its mean
    assert wrong["consensus_ratio"] is None and every["consensus_ratio"] == 0.75
    assert right["solved_per_update"] is None


def test_cost_per_item_separates_llm_time_from_overhead() -> None:
    items = [result("1", 1.0, calls=10, wall=5.0, llm=4.0), result("2", 0.0, calls=20, wall=3.0, llm=1.0)]

    report = build_report([Run(Path("a"), config("friendstv", scripted=True), items)])

    (row,) = report.cost
    assert row.label == "scripted (not a quality figure)" and report.scripted == {row.label}
    assert (row.items, row.llm_calls, row.prompt_tokens, row.completion_tokens) == (2, 15, 1500, 150)
    assert (row.wall_s, row.llm_s, row.overhead_s) == (4.0, 2.5, 1.5)


def test_a_report_read_back_from_its_json_is_the_same_report() -> None:
    items = [result("1", 1.0, rationales_per_plan=4, solved_ratio=1.0), result("2", 0.2, calls=3)]
    runs = [Run(Path("a"), config("np", scripted=True), items), Run(Path("b"), config("schedule-easy"), items[:1])]
    report = build_report(runs)

    assert report_from_dict(json.loads(json.dumps(report.dict()))) == report


def test_answer_quality_puts_em_f1_length_and_cited_precision_beside_the_score() -> None:
    dumped = result("f1", 1.0)
    dumped.score_detail = {"em": 0.0, "f1": 0.1, "containment": 1.0, "answer_tokens": 300, "answer_lines": 30}
    dumped.citations = {"cited": 55, "cited_gold": 1, "gold_lines": 2}
    exact = result("f2", 1.0)
    exact.score_detail = {"em": 1.0, "f1": 1.0, "containment": 1.0, "answer_tokens": 6, "answer_lines": 2}
    exact.citations = {"cited": 2, "cited_gold": 2, "gold_lines": 2}
    silent = result("f3", 0.0)  # cited nothing: it adds no citation to the precision
    silent.score_detail = {"em": 0.0, "f1": 0.0, "containment": 0.0, "answer_tokens": 0, "answer_lines": 0}

    report = build_report([Run(Path("a"), config("friendstv"), [dumped, exact, silent])])

    quality = report.table1["gpt-x"]["friendstv"].quality
    assert quality["cited_precision"] == pytest.approx(3 / 57, abs=1e-4)  # over every citation, not per item
    assert quality["em"] == pytest.approx(1 / 3) and quality["f1"] == pytest.approx(1.1 / 3)
    assert quality["containment"] == pytest.approx(2 / 3) and quality["answer_tokens"] == pytest.approx(102)
    assert quality["cited"] == pytest.approx(28.5)
    assert report_from_dict(json.loads(json.dumps(report.dict()))) == report
    row = quality_text(report).rows[0]
    assert row[:4] == ["gpt-x", "friendstv", "3", "66.67%"] and row[-1] == "5.26%"


def test_answer_quality_says_n_a_where_nothing_was_cited() -> None:
    report = build_report([Run(Path("a"), config("schedule-easy"), [result("e1", 1.0)])])
    quality = report.table1["gpt-x"]["schedule-easy"].quality
    assert quality["cited_precision"] is None and quality["em"] is None
    assert quality_text(report).rows[0][-1] == "n/a" and quality_text(report).rows[0][4] == "n/a"
