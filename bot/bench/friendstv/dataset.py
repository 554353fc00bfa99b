"""Build FriendsTV items: two FriendsQA questions about one scene, asked by a pair with asymmetric visibility.

A question's evidence is the chat messages of the utterances its answers were marked in. The asking pair is chosen
so the first member can see evidence of the first question and none of the second, and the second member the
reverse, verified from channel membership in the FriendsTV world.
"""

from __future__ import annotations

import difflib
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from bot.bench.friendstv.alignment import ChatLine, assign_scenes, chat_lines, load_transcript, spoken
from bot.bench.friendstv.card import AlignmentStats, friendstv_card
from bot.bench.friendstv.friendsqa import Question, detokenize, load_questions
from bot.bench.items import BenchItem, Dataset, Metric
from bot.world import World
from memory_ingest.sources.friendstv import load_friendstv


WORLD_FILE = "worlds/friendstv.json"
MIN_RATIO = 0.75  # character similarity for an answer utterance to match a chat line of its scene
RECURRING = 100  # members who see at least this many messages are recurring characters, preferred as askers
QUESTION = "Answer both questions about the same scene of the show: 1) {first} 2) {second}"
ANSWER = "1) {first} 2) {second}"


@dataclass(frozen=True)
class Evidenced:
    question: Question
    message_ids: tuple[str, ...]
    viewers: frozenset[str]  # members who can see at least one evidence message


def compact(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", spoken(text).lower())


def best_line(utterance: str, lines: list[ChatLine]) -> ChatLine | None:
    target, best, best_ratio = compact(utterance), None, MIN_RATIO
    for line in lines:
        ratio = difflib.SequenceMatcher(None, target, compact(line.text), autojunk=False).ratio()
        if ratio >= best_ratio:
            best, best_ratio = line, ratio
    return best


def viewers_of(world: World, message_ids: tuple[str, ...], channel_of: dict[str, str]) -> frozenset[str]:
    return frozenset(m for mid in message_ids for m in world.channels[channel_of[mid]].member_ids)


def evidence_for(
    world: World, question: Question, scene_lines: list[ChatLine], channel_of: dict[str, str]
) -> Evidenced | None:
    ids: set[str] = set()
    for answer in question.answers:
        line = best_line(answer.utterance, scene_lines)
        if line is not None:
            ids.update(line.message_ids)
    if not ids:
        return None  # every answer sits in a stage direction, which the chat does not hold
    ordered = tuple(sorted(ids, key=lambda mid: int(mid.rsplit("-", 1)[-1])))
    return Evidenced(question, ordered, viewers_of(world, ordered, channel_of))


def asymmetric_pairs(first: Evidenced, second: Evidenced) -> list[tuple[str, str]]:
    """(asker, asked-with) pairs: the asker sees only the first question's evidence, the other only the second's."""
    return [(a, b) for a in sorted(first.viewers - second.viewers) for b in sorted(second.viewers - first.viewers)]


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


def messages_seen(world: World) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for channel in world.channels.values():
        for member in set(channel.member_ids):
            counts[member] += len(world.messages[channel.id])
    return counts


def prefer_recurring(candidates: list[tuple[str, str]], seen: dict[str, int]) -> list[tuple[str, str]]:
    """Recurring characters make a realistic asking pair ("carol and joey"); walk-ons ("woman") only as a fallback."""
    recurring = [(a, b) for a, b in candidates if min(seen[a], seen[b]) >= RECURRING]
    return recurring or candidates


def make_item(index: int, first: Evidenced, second: Evidenced, asking: tuple[str, str]) -> BenchItem:
    parts = [
        {
            "question": detokenize(e.question.text),
            "answers": sorted({detokenize(a.text) for a in e.question.answers}),
            "answer": detokenize(e.question.answers[0].text),
            "friendsqa_id": e.question.id,
        }
        for e in (first, second)
    ]
    return BenchItem(
        id=f"friendstv-{index:03d}",
        dataset="friendstv",
        world=WORLD_FILE,
        asking=asking,
        question=QUESTION.format(first=parts[0]["question"], second=parts[1]["question"]),
        metric=Metric.JUDGE,
        gold={"answer": ANSWER.format(first=parts[0]["answer"], second=parts[1]["answer"]), "parts": parts},
        evidence=first.message_ids + second.message_ids,
        provenance={
            "generator": "friendstv",
            "scene": first.question.scene,
            "question_writer": "template",
            "evidence_by_part": [list(first.message_ids), list(second.message_ids)],
        },
    )


def build_friendstv_dataset(data_dir: Path, seed: int) -> Dataset:
    world = load_friendstv(data_dir)
    questions = load_questions(data_dir)
    episodes = {int(q.scene.split("_e")[1][:2]) for q in questions}
    by_scene, stats = lines_by_scene(world, data_dir, episodes)
    channel_of = {m.id: m.channel_id for msgs in world.messages.values() for m in msgs}
    evidenced: dict[str, list[Evidenced]] = defaultdict(list)
    for question in questions:
        found = evidence_for(world, question, by_scene.get(question.scene, []), channel_of)
        stats.questions += 1
        if found is not None:
            stats.with_evidence += 1
            evidenced[question.scene].append(found)
    seen = messages_seen(world)
    rng = random.Random(f"friendstv:{seed}")
    items: list[BenchItem] = []
    for scene in sorted(evidenced):
        for first, second in combinations(evidenced[scene], 2):
            stats.pairs += 1
            candidates = asymmetric_pairs(first, second)
            if candidates:
                items.append(make_item(len(items), first, second, rng.choice(prefer_recurring(candidates, seen))))
    stats.scenes = len({item.provenance["scene"] for item in items})
    card = friendstv_card(seed, items, world, stats)
    return Dataset("friendstv", seed, items, {WORLD_FILE: world}, card)
