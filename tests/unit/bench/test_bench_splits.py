"""Dev and test splits: deterministic, disjoint, covering every item, a FriendsTV scene on one side; reports say
which split their figures are over (FriendsTV needs ASKWITH_BENCH_DATA_DIR)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from bot.bench.friendstv.dataset import build_friendstv_dataset
from bot.bench.items import write_dataset
from bot.bench.report import Run, build_report, report_from_dict, select_split
from bot.bench.report_tables import scores_text
from bot.bench.results import ItemResult
from bot.bench.run_config import RunConfig
from bot.bench.schedule.dataset import build_schedule_dataset
from bot.bench.splits import DEV, SPLITS, TEST, TEST_SEEDS_FROM, item_splits, scene_split, seed_split, split_of
from bot.errors import BenchError


def test_seeds_below_the_test_range_are_dev_and_the_rest_test() -> None:
    assert [seed_split(s) for s in (0, 1, TEST_SEEDS_FROM - 1, TEST_SEEDS_FROM, TEST_SEEDS_FROM + 7)] == [
        DEV, DEV, DEV, TEST, TEST,
    ]  # fmt: skip
    dev = build_schedule_dataset("easy", 0, count=3).items
    test = build_schedule_dataset("easy", TEST_SEEDS_FROM, count=3).items
    assert {split_of(i) for i in dev} == {DEV} and {split_of(i) for i in test} == {TEST}


def test_a_scene_split_is_a_stable_hash_and_both_sides_get_scenes() -> None:
    scenes = [f"s01_e{e:02d}_c{c:02d}" for e in range(1, 25) for c in range(1, 15)]
    first = {s: scene_split(s) for s in scenes}
    assert first == {s: scene_split(s) for s in reversed(scenes)}
    shares = {side: sum(v == side for v in first.values()) / len(scenes) for side in SPLITS}
    assert 0.35 < shares[DEV] < 0.65 and shares[DEV] + shares[TEST] == 1.0
    assert scene_split("s01_e21_c03") == scene_split("s01_e21_c03")


@pytest.fixture(scope="module")
def friendstv(bench_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("friendstv")
    write_dataset(build_friendstv_dataset(bench_data_dir, 0), directory)
    return directory


def test_friendstv_split_is_deterministic_disjoint_total_and_keeps_a_scene_on_one_side(
    friendstv: Path, bench_data_dir: Path
) -> None:
    splits = dict(item_splits(friendstv))
    items = build_friendstv_dataset(bench_data_dir, 0).items  # built again: the split comes from the item alone
    assert splits == {item.id: split_of(item) for item in items}
    assert set(splits.values()) == set(SPLITS)  # disjoint by construction: one value per item, and both are used
    by_scene: dict[str, set[str]] = defaultdict(set)
    for item in items:
        by_scene[item.provenance["scene"]].add(splits[item.id])
    assert all(len(sides) == 1 for sides in by_scene.values())
    assert any(len([i for i in items if i.provenance["scene"] == s]) > 1 for s in by_scene)  # the rule is tested
    dev = {i for i, s in splits.items() if s == DEV}
    test = {i for i, s in splits.items() if s == TEST}
    assert dev.isdisjoint(test) and dev | test == {item.id for item in items}


def result(item: str, score: float) -> ItemResult:
    return ItemResult(
        item_id=item, dataset="", question="q", gold="g", answer="a", status="done", failure=None, score=score,
        scorer="exact_count", score_detail={}, ask_id=1, ablations=[], llm_calls=1, prompt_tokens=10,
        completion_tokens=1, llm_s=1.0, wall_s=2.0, ingest_s=0.0, behaviour={},
    )  # fmt: skip


def schedule_run(tmp_path: Path, seed: int, scores: list[float]) -> Run:
    directory = tmp_path / f"easy-{seed}"
    write_dataset(build_schedule_dataset("easy", seed, count=len(scores)), directory)
    config = RunConfig.for_run(directory, model="gpt-x", scripted=False, ablations=[], judge=None)
    return Run(tmp_path / f"run-{seed}", config, [result(f"schedule-easy-{i:03d}", s) for i, s in enumerate(scores)])


def test_a_report_of_one_split_keeps_only_its_items_and_says_which(tmp_path: Path) -> None:
    runs = [schedule_run(tmp_path, 0, [1.0, 1.0]), schedule_run(tmp_path, TEST_SEEDS_FROM, [0.0, 1.0, 0.0])]

    test = build_report(select_split(runs, TEST), split=TEST)
    dev = build_report(select_split(runs, DEV), split=DEV)
    both = build_report(select_split(runs, "all"))

    assert test.table1["gpt-x"]["schedule-easy"].items == 3 and test.table1["gpt-x"]["schedule-easy"].score == 1 / 3
    assert dev.table1["gpt-x"]["schedule-easy"].items == 2 and dev.table1["gpt-x"]["schedule-easy"].score == 1.0
    assert both.split == "all" and both.table1["gpt-x"]["schedule-easy"].items == 3  # two seeds share item ids
    assert test.floors["schedule-easy"]["items"] == 3  # the dataset floor is over the split's items too
    assert "split: test" in scores_text(test).title and "over the test split only" in scores_text(test).caption
    assert report_from_dict(json.loads(json.dumps(test.dict()))).split == TEST
    with pytest.raises(BenchError, match="split"):
        select_split(runs, "train")


def test_a_run_whose_dataset_is_gone_is_split_by_its_seed(tmp_path: Path) -> None:
    run = schedule_run(tmp_path, TEST_SEEDS_FROM, [1.0])
    gone = Run(run.run_dir, RunConfig(**{**run.config.__dict__, "dataset_dir": str(tmp_path / "gone")}), run.results)
    assert [len(r.results) for r in select_split([gone], TEST)] == [1]
    assert [len(r.results) for r in select_split([gone], DEV)] == [0]
