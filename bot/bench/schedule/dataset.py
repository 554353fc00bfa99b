"""Build Schedule Easy / Medium / Hard: one workspace per item (the same six people, each item its own day)."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from bot.bench.items import BenchItem, Dataset, Metric
from bot.bench.schedule import answers
from bot.bench.schedule.card import schedule_card
from bot.bench.schedule.dialogue import Statement, display, render_chat
from bot.bench.schedule.model import Schedules, schedules_to_json
from bot.bench.schedule.pools import ALL_NAMES, ASKING_PAIR, EASY_PEOPLE, PARTIES, PEOPLE
from bot.bench.schedule.schedules import PAPER, VARIANTS, ScheduleSpec, generate_schedules
from bot.bench.timeslots import clock, format_span
from bot.errors import BenchGenerationError
from bot.platform.port import Member
from bot.store.world import World


ITEMS_PER_LEVEL = 30
MAX_ATTEMPTS = 50  # re-draws of one item's day before giving up (each attempt has its own seed)
LEVELS = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Level:
    name: str
    spec: ScheduleSpec
    chats: tuple[tuple[str, str], ...]  # (hub, friend) DMs
    metric: Metric
    question: str


_FULL_CHATS = tuple((party[0], friend) for party in PARTIES for friend in party[1:])
LEVEL_SPECS = {
    "easy": Level(
        "easy",
        ScheduleSpec(EASY_PEOPLE, groups=2, fill=0.5, apart=frozenset(ASKING_PAIR)),
        (("alice", "bob"), ("dave", "emily")),
        Metric.EXACT_COUNT,
        "At least how many activities need to be deleted so that none of Alice's activities overlaps any of "
        "Dave's today? Sleep does not count.",
    ),
    "medium": Level(
        "medium",
        ScheduleSpec(PEOPLE, groups=3, fill=0.5),
        _FULL_CHATS,
        Metric.NAME_F1,
        "Please find out the activity with the longest duration on the schedules of all six of us today "
        "(Alice, Bob, Charlie, Dave, Emily and Franklin), not counting sleep. If several tie, list them all.",
    ),
    "hard": Level(
        "hard",
        ScheduleSpec(PEOPLE, groups=3, fill=0.15),
        _FULL_CHATS,
        Metric.SLOT_IOU,
        "Please find out when all our friends (Alice, Bob, Charlie, Dave, Emily and Franklin) can join together "
        "today and list all free time spans.",
    ),
}


def gold_for(level: str, schedules: Schedules) -> dict[str, object]:
    if level == "easy":
        count = answers.min_deletions(schedules[ASKING_PAIR[0]], schedules[ASKING_PAIR[1]])
        return {"answer": str(count), "count": count}
    if level == "medium":
        names = answers.longest_activities(schedules)
        return {"answer": ", ".join(names), "activities": names, "vocabulary": list(ALL_NAMES)}
    spans = [format_span(s) for s in answers.common_free_spans(schedules)]
    return {"answer": ", ".join(spans), "spans": spans}


def is_interesting(level: str, gold: dict[str, object]) -> bool:
    """Reject degenerate days: no conflict to resolve (Easy) or no common free time (Hard)."""
    if level == "easy":
        return gold["count"] != 0
    if level == "hard":
        return bool(gold["spans"])
    return True


def build_world(item_id: str, level: Level, schedules: Schedules, rng: random.Random) -> tuple[World, list[Statement]]:
    world = World(id=item_id, name=f"Schedule {level.name} {item_id.rsplit('-', 1)[-1]}")
    for person in level.spec.people:
        world.add_member(Member(person, person, display(person)))
    statements: list[Statement] = []
    for hub, friend in level.chats:
        statements += render_chat(world, schedules, hub, friend, rng, minute=world.message_count())
    return world, statements


def needed_people(level: Level) -> tuple[str, ...]:
    return ASKING_PAIR if level.name == "easy" else level.spec.people


def check_stated(world: World, statements: list[Statement], schedules: Schedules, needed: tuple[str, ...]) -> None:
    """Every activity the answer depends on is stated, with its times, in a chat an asking member can see."""
    visible = {c.id for member in ASKING_PAIR for c in world.visible_channels(member)}
    texts = {m.id: m.text for msgs in world.messages.values() for m in msgs}
    for person in needed:
        for activity in schedules[person]:
            times = [clock(activity.end)] if activity.start == 0 else [clock(activity.start)]
            if not activity.is_sleep:
                times.append(clock(activity.end))
            if not any(
                s.speaker == person
                and s.activity == activity
                and s.channel_id in visible
                and all(t in texts[s.message_id] for t in times)
                for s in statements
            ):
                raise BenchGenerationError(f"{world.id}: {person}'s {activity.name} is not stated where it is seen")


def build_item(level: Level, seed: int, index: int) -> tuple[BenchItem, World]:
    item_id = f"schedule-{level.name}-{index:03d}"
    for attempt in range(MAX_ATTEMPTS):
        rng = random.Random(f"schedule-{level.name}:{seed}:{index}:{attempt}")
        schedules = generate_schedules(level.spec, rng)
        gold = gold_for(level.name, schedules)
        if is_interesting(level.name, gold):
            break
    else:
        raise BenchGenerationError(f"{item_id}: no usable day in {MAX_ATTEMPTS} attempts")
    world, statements = build_world(item_id, level, schedules, rng)
    needed = needed_people(level)
    check_stated(world, statements, schedules, needed)
    item = BenchItem(
        id=item_id,
        dataset=f"schedule-{level.name}",
        world=f"worlds/{item_id}.json",
        asking=ASKING_PAIR,
        question=level.question,
        metric=level.metric,
        gold=gold,
        evidence=tuple(s.message_id for s in statements if s.speaker in needed),
        provenance={
            "generator": "schedule",
            "level": level.name,
            "seed": seed,
            "index": index,
            "attempt": attempt,
            "chats": [list(chat) for chat in level.chats],
            "needed": list(needed),
            "schedules": schedules_to_json(schedules),
        },
    )
    return item, world


def build_schedule_dataset(
    level_name: str, seed: int, *, count: int = ITEMS_PER_LEVEL, variant: str = PAPER
) -> Dataset:
    """`variant`: how activity lengths are drawn; `paper` (the default) as appendix D.2, or `per-person`."""
    if variant not in VARIANTS:
        raise BenchGenerationError(f"Unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}.")
    level = LEVEL_SPECS[level_name]
    if variant != PAPER:
        level = replace(level, spec=replace(level.spec, variant=variant))
    items, worlds = [], {}
    for index in range(count):
        item, world = build_item(level, seed, index)
        items.append(item)
        worlds[item.world] = world
    card = schedule_card(level, seed, items, worlds)
    return Dataset(f"schedule-{level_name}", seed, items, worlds, card, variant=variant)
