"""NP and FriendsTV datasets (need ASKWITH_BENCH_DATA_DIR)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bench.generate import generate
from bot.bench.items import BenchItem, load_items, load_world
from bot.port import ChatMessage
from bot.settings import Settings
from bot.world import World


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(bench_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    settings = Settings(bench_data_dir=bench_data_dir)
    dirs = {}
    for name in ("np", "friendstv"):
        dirs[name] = tmp_path_factory.mktemp(name)
        generate(name, 5, dirs[name], settings)
    return dirs


@pytest.mark.parametrize("name", ["np", "friendstv"])
def test_same_seed_gives_byte_identical_files(
    name: str, built: dict[str, Path], bench_data_dir: Path, tmp_path: Path
) -> None:
    generate(name, 5, tmp_path, Settings(bench_data_dir=bench_data_dir))
    assert _files(built[name]) == _files(tmp_path)


def _message(world: World, message_id: str) -> ChatMessage:
    return next(m for msgs in world.messages.values() for m in msgs if m.id == message_id)


def test_np_needle_text_is_in_alices_and_daves_lines(built: dict[str, Path]) -> None:
    items = load_items(built["np"])
    assert len(items) == 100
    for item in items:
        world = load_world(built["np"], item)
        lines = item.provenance["needle_lines"]
        assert sorted(line["person"] for line in lines) == ["alice", "alice", "dave", "dave"]
        for line in lines:
            message = _message(world, line["message_id"])
            assert message.sender_id == line["person"] and line["text"] in message.text
        needle = item.gold["answer"].lower()  # a sentence may start with it capitalized ("The cello is ...")
        holders = {line["person"] for line in lines if needle in line["text"].lower()}
        assert holders == {"alice", "dave"}, item.id  # the needle item is stated by both, once each
        every_text = " ".join(m.text for msgs in world.messages.values() for m in msgs).lower()
        assert every_text.count(needle) == 2, item.id
        assert item.asking == ("bob", "charlie")
        seen_by_bob = {c.id for c in world.visible_channels("bob")}
        seen_by_charlie = {c.id for c in world.visible_channels("charlie")}
        alice_line = next(_message(world, x["message_id"]) for x in lines if x["person"] == "alice")
        dave_line = next(_message(world, x["message_id"]) for x in lines if x["person"] == "dave")
        assert alice_line.channel_id in seen_by_bob - seen_by_charlie
        assert dave_line.channel_id in seen_by_charlie - seen_by_bob


def test_every_friendstv_item_is_asymmetric(built: dict[str, Path]) -> None:
    items = load_items(built["friendstv"])
    assert len(items) >= 100
    world = load_world(built["friendstv"], items[0])
    assert len(world.members) == 140
    channel_of = {m.id: m.channel_id for msgs in world.messages.values() for m in msgs}
    for item in items:
        first, second = item.provenance["evidence_by_part"]
        asker, other = item.asking
        visible = {name: {c.id for c in world.visible_channels(name)} for name in item.asking}
        assert any(channel_of[m] in visible[asker] for m in first), item.id
        assert not any(channel_of[m] in visible[asker] for m in second), item.id
        assert any(channel_of[m] in visible[other] for m in second), item.id
        assert not any(channel_of[m] in visible[other] for m in first), item.id
        assert [p["question"] in item.question for p in item.gold["parts"]] == [True, True]


def test_items_round_trip_through_the_dataset_file(built: dict[str, Path]) -> None:
    for item in load_items(built["friendstv"])[:5]:
        assert BenchItem.from_dict(item.to_dict()) == item
