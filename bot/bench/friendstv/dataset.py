"""Build FriendsTV items the authors' way: two FriendsQA answers of one scene, each heard by a third party.

Per scene: the questions' answers are tied to chat lines (`rationale`), question pairs pass the authors' filter
(`pairing.scene_pairs`), a question is composed (`compose`), and an asking pair is drawn from the social network so
that most items need a third party's agent (`pairing.choose_asking`). Every item records, per part, the hops the
pair needs and the third parties who hold the rationale.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from bot.bench.friendstv.alignment import ChatLine, assign_scenes, chat_lines, load_transcript
from bot.bench.friendstv.card import AlignmentStats, friendstv_card
from bot.bench.friendstv.compose import Composed, Composer
from bot.bench.friendstv.friendsqa import LoadStats, detokenize, load_questions
from bot.bench.friendstv.pairing import Asked, Network, choose_asking, scene_pairs
from bot.bench.friendstv.rationale import Rationale, rationales_of
from bot.bench.items import BenchItem, Dataset, Metric
from bot.world import World
from memory_ingest.sources.friendstv import load_friendstv


WORLD_FILE = "worlds/friendstv.json"


def lines_by_scene(
    world: World, data_dir: Path, episodes: set[int]
) -> tuple[dict[str, list[ChatLine]], AlignmentStats]:
    transcript = load_transcript(data_dir)
    episode_lines: dict[int, list[ChatLine]] = defaultdict(list)
    for line in chat_lines(world, episodes):
        episode_lines[line.episode].append(line)
    by_scene: dict[str, list[ChatLine]] = defaultdict(list)
    stats = AlignmentStats()
    for episode in sorted(episode_lines):
        placed, matched = assign_scenes(episode_lines[episode], transcript.get(episode, []))
        stats.lines += len(placed)
        stats.matched += matched
        for line in placed:
            by_scene[line.scene].append(line)
    return by_scene, stats


def make_item(index: int, asked: Asked, composed: Composed) -> BenchItem:
    parts = [
        {
            "question": detokenize(p.rationale.question.text),
            "answer": detokenize(p.rationale.answer.text),
            "answers": sorted({detokenize(a.text) for a in p.rationale.answers}),
            "friendsqa_id": p.rationale.question.id,
            "hops": p.hops,
            "third_parties": list(p.third_parties),
            "holders": sorted(p.rationale.viewers),
            "speaker": p.rationale.speaker,
        }
        for p in asked.parts
    ]
    gold = {"answer": composed.answer, "parts": parts, "composed_by": composed.writer}
    first, second = (p.rationale for p in asked.parts)
    return BenchItem(
        id=f"friendstv-{index:03d}",
        dataset="friendstv",
        world=WORLD_FILE,
        asking=asked.asking,
        question=composed.question,
        metric=Metric.JUDGE,
        gold=gold,
        evidence=first.line.message_ids + second.line.message_ids,
        provenance={
            "generator": "friendstv",
            "scene": first.question.scene,
            "question_writer": composed.writer,
            "hops": asked.hops,
            "evidence_by_part": [list(first.line.message_ids), list(second.line.message_ids)],
        },
    )


def scene_rationales(
    world: World, data_dir: Path, stats: AlignmentStats, load: LoadStats
) -> tuple[dict[str, list[Rationale]], dict[str, list[ChatLine]]]:
    questions = load_questions(data_dir, load)
    episodes = {int(q.scene.split("_e")[1][:2]) for q in questions}
    by_scene, aligned = lines_by_scene(world, data_dir, episodes)
    stats.lines, stats.matched = aligned.lines, aligned.matched
    sender_of = {m.id: (m.sender_id, m.channel_id) for msgs in world.messages.values() for m in msgs}
    by_episode: dict[str, list[ChatLine]] = defaultdict(list)
    for scene in sorted(by_scene):
        by_episode[scene[:7]] += by_scene[scene]
    rationales: dict[str, list[Rationale]] = defaultdict(list)
    for question in questions:
        lines = (by_scene.get(question.scene, []), by_episode.get(question.scene[:7], []))
        found = rationales_of(world, question, lines, sender_of)
        stats.with_evidence += bool(found)
        rationales[question.scene] += found
    stats.questions = load.questions
    return rationales, by_scene


def build_friendstv_dataset(data_dir: Path, seed: int, *, composer: Composer | None = None) -> Dataset:
    composer = composer or Composer(llm=None)
    world = load_friendstv(data_dir)
    stats, load = AlignmentStats(), LoadStats()
    rationales, by_scene = scene_rationales(world, data_dir, stats, load)
    network = Network(world)
    rng = random.Random(f"friendstv:{seed}")
    items: list[BenchItem] = []
    for scene in sorted(rationales):
        for first, second in scene_pairs(rationales[scene]):
            stats.pairs += 1
            asked = choose_asking(network, first, second, rng)
            if asked is None:
                stats.no_asker += 1
                continue
            items.append(make_item(len(items), asked, composer.compose(first, second, by_scene[scene])))
    stats.scenes = len({item.provenance["scene"] for item in items})
    card = friendstv_card(seed, items, world, stats, load, composer.writer)
    return Dataset("friendstv", seed, items, {WORLD_FILE: world}, card)
