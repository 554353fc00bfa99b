from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.bench.items import load_items, load_world, write_dataset
from bot.bench.schedule import answers
from bot.bench.schedule.dataset import LEVELS, build_schedule_dataset
from bot.bench.schedule.dialogue import display
from bot.bench.schedule.model import Activity, schedules_from_json
from bot.bench.schedule.verify import least_deletions, read_entry, verify_dataset, verify_item


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module", params=LEVELS)
def level_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"schedule-{request.param}")
    write_dataset(build_schedule_dataset(request.param, 11), out)
    return out


def test_same_seed_gives_byte_identical_files(level_dir: Path, tmp_path: Path) -> None:
    level = json.loads((level_dir / "dataset.json").read_text())["dataset"].split("-")[1]
    write_dataset(build_schedule_dataset(level, 11), tmp_path / "again")
    assert _files(level_dir) == _files(tmp_path / "again")
    write_dataset(build_schedule_dataset(level, 12), tmp_path / "other")
    assert _files(level_dir)["items.jsonl"] != _files(tmp_path / "other")["items.jsonl"]


def test_verifier_agrees_on_every_item(level_dir: Path) -> None:
    report = verify_dataset(level_dir)
    assert report.problems == []
    assert report.items == report.agreed == 30


def test_verifier_catches_a_wrong_gold_answer(level_dir: Path) -> None:
    item = load_items(level_dir)[0]
    wrong = dict(item.gold, count=99, activities=["knitting"], spans=["1:00-2:00"])
    tampered = type(item).from_dict({**item.to_dict(), "gold": wrong})
    problems = verify_item(tampered, load_world(level_dir, item))
    assert len(problems) == 2  # both the recorded schedules and the dialogue text disagree


def test_verifier_catches_an_activity_missing_from_the_dialogue(level_dir: Path) -> None:
    item = load_items(level_dir)[0]
    world = load_world(level_dir, item)
    dropped = item.evidence[3]
    for messages in world.messages.values():
        messages[:] = [m for m in messages if m.id != dropped]
    assert any("differs from the recorded one" in p for p in verify_item(item, world))


def test_group_activities_name_others_only_to_fellow_participants(level_dir: Path) -> None:
    for item in load_items(level_dir):
        world = load_world(level_dir, item)
        schedules = schedules_from_json(item.provenance["schedules"])
        for channel in world.channels.values():
            for message in world.messages[channel.id]:
                listener = next(m for m in channel.member_ids if m != message.sender_id)
                entry = read_entry(message.text)
                group = [a for a in schedules[message.sender_id] if entry and (a.name, a.start, a.end) == entry]
                if group and group[0].kind == "group" and listener not in group[0].participants:
                    others = [display(p) for p in group[0].participants if p != message.sender_id]
                    assert not any(name in message.text for name in others), message.text


def test_easy_minimum_deletions_by_hand() -> None:
    alice = [Activity(0, 2, "yoga", "single"), Activity(4, 6, "lunch", "routine"), Activity(8, 9, "tea", "single")]
    dave = [Activity(1, 5, "reading", "single"), Activity(5, 8, "baking", "single"), Activity(0, 1, "sleep", "sleep")]
    # reading overlaps yoga and lunch; baking overlaps lunch; sleep never counts.
    # Keep yoga, baking, tea (3 of 5) -> 2 deletions (reading and lunch).
    assert answers.min_deletions(alice, dave) == 2
    entries = {"a": {(a.name, a.start, a.end) for a in alice}, "d": {(a.name, a.start, a.end) for a in dave}}
    assert least_deletions(entries["a"], entries["d"]) == 2


def test_free_spans_and_longest_by_hand() -> None:
    schedules = {
        "a": [
            Activity(0, 14, "sleep", "sleep"),
            Activity(20, 24, "painting", "single"),
            Activity(44, 48, "sleep", "sleep"),
        ],
        "b": [
            Activity(0, 16, "sleep", "sleep"),
            Activity(24, 28, "studying", "single"),
            Activity(40, 48, "sleep", "sleep"),
        ],
    }
    assert answers.common_free_spans(schedules) == [(16, 20), (28, 40)]
    assert answers.longest_activities(schedules) == ["painting", "studying"]
