"""NP and FriendsTV datasets (need ASKWITH_BENCH_DATA_DIR)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.bench.generate import generate
from bot.bench.items import BenchItem, load_items, load_world
from bot.bench.scoring import accepted_answers, normalized_match
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.types import LLMRequest
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


def test_friendstv_hops_are_proved_from_visibility(built: dict[str, Path]) -> None:
    """Per item: hops 0 = the pair sees both rationales; hops >= 1 = the pair alone cannot, and every third party
    named talks with the pair and can see the rationale it is named for."""
    items = load_items(built["friendstv"])
    world = load_world(built["friendstv"], items[0])
    assert len(world.members) == 140
    channel_of = {m.id: m.channel_id for msgs in world.messages.values() for m in msgs}

    def sees(member: str, message_ids: list[str]) -> bool:
        visible = {c.id for c in world.visible_channels(member)}
        return any(channel_of[m] in visible for m in message_ids)

    def talks_with(member: str) -> set[str]:
        return {x for c in world.visible_channels(member) for x in c.member_ids} - {member}

    near = {}
    for item in items:
        asker, other = item.asking
        assert asker != other and other in talks_with(asker), item.id
        pair_near = near.setdefault(item.asking, talks_with(asker) | talks_with(other))
        parts = item.gold["parts"]
        for part, evidence in zip(parts, item.provenance["evidence_by_part"], strict=True):
            pair_sees = sees(asker, evidence) or sees(other, evidence)
            assert pair_sees == (part["hops"] == 0), item.id
            if part["hops"] == 1:
                assert part["third_parties"], item.id
                for third in part["third_parties"]:
                    assert third not in item.asking and third in pair_near, item.id
                    assert sees(third, evidence), item.id
        assert item.provenance["hops"] == max(p["hops"] for p in parts), item.id
        if item.provenance["hops"] >= 1:
            assert not all(sees(asker, e) or sees(other, e) for e in item.provenance["evidence_by_part"]), item.id
        assert [p["question"] in item.question for p in parts] == [True, True]


def test_friendstv_needs_hops_and_keeps_the_authors_filter(built: dict[str, Path]) -> None:
    items = load_items(built["friendstv"])
    world = load_world(built["friendstv"], items[0])
    needs_hop = sum(item.provenance["hops"] >= 1 for item in items)
    assert needs_hop >= 0.6 * len(items)
    humans_only = {"marcel", "tv", "atm", "guys"}
    for item in items:
        assert not humans_only & set(item.asking), item.id
        first, second = item.gold["parts"]
        speakers = {first["speaker"], second["speaker"]}
        assert set(first["holders"]) != set(second["holders"]), item.id
        assert set(first["holders"]) - set(second["holders"]) - speakers, item.id  # QA1_third_party
        assert set(second["holders"]) - set(first["holders"]) - speakers, item.id  # QA2_third_party
        assert set(first["holders"]) - set(item.asking) and set(second["holders"]) - set(item.asking), item.id
        for part in (first, second):  # answerable only together: one part's answers never pass for both
            assert normalized_match(" ".join(part["answers"]), accepted_answers(item)).value == 0.0, item.id
        for part, other in ((first, second), (second, first)):
            assert not any(a.lower() in other["question"].lower() for a in part["answers"]), item.id  # no leak
        for message_id in item.evidence:
            text = next(m.text for msgs in world.messages.values() for m in msgs if m.id == message_id)
            assert re.sub(r"\[[^\]]*\]|\([^)]*\)", "", text).strip(), item.id  # never a stage direction only


def test_items_round_trip_through_the_dataset_file(built: dict[str, Path]) -> None:
    for item in load_items(built["friendstv"])[:5]:
        assert BenchItem.from_dict(item.to_dict()) == item


def _composer_script(request: LLMRequest) -> str:
    first = request.messages[0]["content"].split("which are ")[-1]
    return f"1. Composed from {first}?\n2. because\n3. because\n4. {first[:20]}\n5. so"


def test_friendstv_composed_by_a_model_is_cached_and_byte_identical(
    built: dict[str, Path], bench_data_dir: Path, tmp_path: Path
) -> None:
    settings = Settings(bench_data_dir=bench_data_dir, data_dir=tmp_path / "data")
    backend = ScriptedBackend(_composer_script, model="composer-x")
    generate("friendstv", 5, tmp_path / "fresh", settings, composer_llm=LLMClient(backend))
    calls = len(backend.requests)
    assert 0 < calls <= len(load_items(tmp_path / "fresh"))  # identical prompts are composed once
    generate("friendstv", 5, tmp_path / "cached", settings, composer_llm=LLMClient(backend))
    assert len(backend.requests) == calls  # every composition came from the cache
    assert _files(tmp_path / "fresh") == _files(tmp_path / "cached")
    item = load_items(tmp_path / "cached")[0]
    assert item.provenance["question_writer"] == "composer-x" and item.question.startswith("Composed from")
    assert "Question writer: composer-x" in (tmp_path / "cached" / "card.md").read_text(encoding="utf-8")
    # offline, with a filled cache lying around: still the template build of the seed, byte for byte
    generate("friendstv", 5, tmp_path / "offline", settings)
    assert _files(tmp_path / "offline") == _files(built["friendstv"])
