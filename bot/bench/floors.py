"""No-communication floors: what a dataset's metric gives to answers made without the agents talking.

Computed by algorithm from the same items (never by a model), so a score can be read against them:

- constant: the most frequent gold answer, given to every item;
- each side alone: the best deterministic answer from what one asking member sees (their own chats);
- random: a seeded random answer of the right kind.

    floors = dataset_floors(dataset_dir)   # Floors(constant=0.726, side={"alice": .., "dave": ..}, random=..)
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from statistics import fmean
from typing import Any

from bot.bench.extraction import normalize
from bot.bench.items import ITEMS, BenchItem, Metric, load_items, load_world
from bot.bench.persona.dataset import ALL_ITEMS
from bot.bench.schedule import answers
from bot.bench.schedule.model import schedules_from_json
from bot.bench.scoring import rule_score as score_by_rules
from bot.bench.timeslots import format_span
from bot.store.world import World


@dataclass(frozen=True)
class Floors:
    constant: float
    constant_answer: str
    side: dict[str, float]  # "asker" / "asked": each asking side answering alone
    random: float
    notes: list[str] = field(default_factory=list)
    items: int = 0  # n: the items the floors are over

    @property
    def best(self) -> float:
        return max(self.constant, self.random, *self.side.values())

    def dict(self) -> dict[str, Any]:
        return {"constant": self.constant, "constant_answer": self.constant_answer, "side": self.side,
                "random": self.random, "best": self.best, "notes": self.notes, "items": self.items}  # fmt: skip


def rule_score(item: BenchItem, prediction: str) -> float:
    return score_by_rules(item, prediction).value


def dataset_floors(dataset_dir: Path, item_ids: frozenset[str] | None = None) -> Floors:
    """The floors over all the dataset's items (or only those in `item_ids`: the items a run scored); `items` = n."""
    version = (Path(dataset_dir) / ITEMS).stat().st_mtime_ns  # a regenerated dataset is computed afresh
    return _floors(Path(dataset_dir), item_ids, version)


@cache
def _floors(dataset_dir: Path, item_ids: frozenset[str] | None, version: int) -> Floors:
    items = [item for item in load_items(dataset_dir) if item_ids is None or item.id in item_ids]
    if not items:
        return Floors(0.0, "", {"asker": 0.0, "asked": 0.0}, 0.0)
    constant = Counter(str(item.gold["answer"]) for item in items).most_common(1)[0][0]
    rng = random.Random(f"floors:{items[0].dataset}")
    worlds: dict[str, World] = {}
    side: dict[str, list[float]] = {"asker": [], "asked": []}
    randoms = []
    for item in items:
        for role, member in zip(("asker", "asked"), item.asking, strict=True):
            guess = constant if item.metric is Metric.EXACT_COUNT else side_answer(item, member, dataset_dir, worlds)
            side[role].append(rule_score(item, guess))
        randoms.append(rule_score(item, random_answer(item, items, rng)))
    notes = ["Easy: one side cannot see the other's activities, so its best answer is the most frequent count."] * (
        items[0].metric is Metric.EXACT_COUNT
    )
    return Floors(
        fmean(rule_score(item, constant) for item in items), constant, {k: fmean(v) for k, v in side.items()},
        fmean(randoms), notes, len(items),
    )  # fmt: skip


def side_answer(item: BenchItem, member: str, dataset_dir: Path, worlds: dict[str, World]) -> str:
    """The best deterministic answer `member` can give from their own chats."""
    if item.metric is Metric.JUDGE:
        world = worlds.get(item.world) or worlds.setdefault(item.world, load_world(dataset_dir, item))
        seen = [m.text for c in world.visible_channels(member) for m in world.messages[c.id]]
        if item.dataset == "np":
            return first_mentioned(" ".join(t for t in seen if any(x in t.lower() for x in ALL_ITEMS)))
        evidence = set(item.evidence)
        return " ".join(m.text for c in world.visible_channels(member) for m in world.messages[c.id]
                        if m.id in evidence)  # fmt: skip
    if item.metric is Metric.EXACT_COUNT:
        return ""  # replaced by the constant below (see Floors.notes)
    schedules = schedules_from_json(item.provenance["schedules"])
    known = {member} | {p for chat in item.provenance["chats"] if member in chat for p in chat}
    own = {p: acts for p, acts in schedules.items() if p in known}
    if item.metric is Metric.NAME_F1:
        return ", ".join(answers.longest_activities(own))
    return ", ".join(format_span(s) for s in answers.common_free_spans(own))


def first_mentioned(text: str) -> str:
    lowered = normalize(text)
    found = [(lowered.find(normalize(x)), x) for x in ALL_ITEMS if f" {normalize(x)} " in f" {lowered} "]
    return min(found)[1] if found else ""


def random_answer(item: BenchItem, items: list[BenchItem], rng: random.Random) -> str:
    if item.metric is Metric.EXACT_COUNT:
        counts = [int(i.gold["count"]) for i in items]
        return str(rng.randint(min(counts), max(counts)))
    if item.metric is Metric.NAME_F1:
        return rng.choice(list(item.gold["vocabulary"]))
    if item.metric is Metric.SLOT_IOU:
        start = rng.randrange(0, 46)
        return format_span((start, start + rng.randint(1, min(6, 48 - start))))
    others = [i for i in items if i.id != item.id] or items
    return str(rng.choice(others).gold["answer"])  # another item's answer: the right kind, drawn blind
