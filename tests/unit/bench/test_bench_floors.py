"""No-communication floors, computed by algorithm over a dataset and over the items a run scored, and the Schedule
Medium variant that makes the longest activity unguessable from the pool."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bench.floors import dataset_floors
from bot.bench.generate import generate
from bot.bench.items import load_items
from bot.bench.report import Run, build_report
from bot.bench.report_tables import scores_text
from bot.bench.results import ItemResult
from bot.bench.run_config import RunConfig
from bot.bench.schedule.model import schedules_from_json
from bot.bench.schedule.pools import SINGLE_POOL
from bot.errors import BenchDataError
from bot.settings import Settings


@pytest.fixture(scope="module")
def medium(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    dirs = {}
    for variant in ("paper", "per-person"):
        dirs[variant] = tmp_path_factory.mktemp(variant)
        generate("schedule-medium", 0, dirs[variant], Settings(), variant=variant)
    return dirs


def test_medium_constant_answer_floor_drops_with_per_person_lengths(medium: dict[str, Path]) -> None:
    paper, per_person = dataset_floors(medium["paper"]), dataset_floors(medium["per-person"])
    assert paper.constant_answer == "painting, studying"  # the pool's two 5-slot singles
    assert paper.constant == pytest.approx(0.7256, abs=1e-3)  # the 72.6 % at seed 0
    assert per_person.constant < 0.25 < paper.constant
    assert all(0.0 <= v <= 1.0 for v in (*paper.side.values(), paper.random))
    assert paper.best == max(paper.constant, paper.random, *paper.side.values())


def test_per_person_lengths_differ_from_the_pool_and_are_labelled(medium: dict[str, Path]) -> None:
    pool = {a.name: a.slots for a in SINGLE_POOL}
    lengths = [
        (a.name, a.slots)
        for item in load_items(medium["per-person"])
        for acts in schedules_from_json(item.provenance["schedules"]).values()
        for a in acts
        if a.kind == "single"
    ]
    assert any(pool[name] != slots for name, slots in lengths)
    assert "per-person lengths (not the paper's)" in (medium["per-person"] / "card.md").read_text()
    assert "paper (default)" in (medium["paper"] / "card.md").read_text()
    assert '"variant": "per-person"' in (medium["per-person"] / "dataset.json").read_text()
    assert "variant" not in (medium["paper"] / "dataset.json").read_text()


def test_floors_are_over_the_items_scored(medium: dict[str, Path]) -> None:
    ids = [item.id for item in load_items(medium["paper"])]
    few = dataset_floors(medium["paper"], frozenset(ids[:3]))
    items = {i.id: i for i in load_items(medium["paper"])}
    expected = sum(items[i].gold["answer"] == few.constant_answer for i in ids[:3]) / 3
    assert few.constant >= expected  # an exact match scores 1; a partial overlap adds F1 on top


def test_a_variant_applies_to_its_own_dataset_only(tmp_path: Path) -> None:
    with pytest.raises(BenchDataError, match="does not apply to np"):
        generate("np", 0, tmp_path, Settings(), variant="per-person")
    with pytest.raises(BenchDataError, match="does not apply to schedule-easy"):
        generate("schedule-easy", 0, tmp_path, Settings(), variant="find-who-knows")


def test_a_report_shows_full_dataset_floors_beside_the_floors_of_the_items_run(medium: dict[str, Path]) -> None:
    """A run of 3 items: the floor rows are over the whole dataset (its n), the last over the 3 items (n=3)."""
    every = load_items(medium["paper"])
    config = RunConfig("schedule-medium", str(medium["paper"]), 0, "gpt-x", False, [], [], None)
    results = [_result(item.id) for item in every[:3]]

    report = build_report([Run(Path("run"), config, results)])

    assert report.floors["schedule-medium"]["items"] == len(every) > 3
    assert report.floors["schedule-medium"] == dataset_floors(medium["paper"]).dict()
    assert report.run_floors["schedule-medium"]["items"] == 3
    column = 3 + report.datasets.index("schedule-medium")
    rows = {row[0]: row[column] for row in scores_text(report).rows}
    assert rows["floor: constant most-frequent answer"].endswith(f"(n={len(every)})")
    assert rows["floor over the items run: best of the above"].endswith("(n=3)")


def _result(item_id: str) -> ItemResult:
    return ItemResult(
        item_id=item_id, dataset="schedule-medium", question="q", gold="g", answer="a", status="done", failure=None,
        score=0.5, scorer="name_f1", score_detail={}, ask_id=1, ablations=[], llm_calls=1, prompt_tokens=1,
        completion_tokens=1, llm_s=0.1, wall_s=0.2, ingest_s=0.0, behaviour={},
    )  # fmt: skip
