"""Build Needle in the Persona: one four-member workspace per item (Alice-Bob and Charlie-Dave DMs)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from bot.bench.items import BenchItem, Dataset, Metric
from bot.bench.persona import needles
from bot.bench.persona.card import persona_card
from bot.bench.persona.spc import Conversation, load_conversations, name_speakers
from bot.errors import BenchGenerationError
from bot.platform.port import Member
from bot.store.world import World


ITEMS = 100
MIN_LINES = 3  # each needle holder needs a line for the needle and one for the decoy, past the greeting
ASKING_PAIR = ("bob", "charlie")
PAIRS = (("alice", "bob"), ("charlie", "dave"))  # (User 1, User 2) of the first and the second conversation
CHAT_START = (datetime.fromisoformat("2024-05-10T18:00:00+00:00"), datetime.fromisoformat("2024-05-11T19:00:00+00:00"))
ALL_ITEMS = tuple(item.lower() for category in needles.CATEGORIES for item in category.items)


@dataclass(frozen=True)
class Injection:
    person: str
    line: int  # index of the person's line in the conversation
    text: str


def usable(conversation: Conversation) -> bool:
    """Long enough for both speakers and free of every needle item (so the needle is the only mention)."""
    counts = [sum(1 for s, _ in conversation.lines if s == who) for who in (1, 2)]
    lowered = conversation.text().lower()
    return min(counts) > MIN_LINES and not any(item in lowered for item in ALL_ITEMS)


def plan_injections(
    conversation: Conversation, speaker: int, person: str, texts: list[str], rng: random.Random
) -> list[Injection]:
    """Pick distinct lines of `speaker` (not the opening one) to carry the given sentences, in line order."""
    own = [i for i, (s, _) in enumerate(conversation.lines) if s == speaker][1:]
    chosen = sorted(rng.sample(own, len(texts)))
    return [Injection(person, line, text) for line, text in zip(chosen, texts, strict=True)]


def person_sentences(kind: str, person: str, needle: str, decoy: str, noun: str, rng: random.Random) -> list[str]:
    templates = needles.LIKES if needles.polarity(kind, person) else needles.DISLIKES
    picked = rng.sample(templates, 2)
    sentences = [needles.sentence(picked[0], needle, noun), needles.sentence(picked[1], decoy, noun)]
    rng.shuffle(sentences)
    return sentences


def write_conversation(
    world: World, conversation: Conversation, pair: tuple[str, str], injections: list[Injection], start: datetime
) -> dict[int, str]:
    """Post the conversation as a DM with the injections appended; returns line index -> message id."""
    channel = world.dm(*pair)
    extra = {inj.line: inj.text for inj in injections}
    ids: dict[int, str] = {}
    for index, (speaker, text) in enumerate(conversation.lines):
        body = f"{text} {extra[index]}" if index in extra else text
        message_id = f"{world.id}-m{world.message_count() + 1:03d}"
        world.add_message(
            channel.id, pair[speaker - 1], body, ts=start + timedelta(minutes=index), message_id=message_id
        )
        ids[index] = message_id
    return ids


def build_world(
    item_id: str, conversations: tuple[Conversation, Conversation], injections: tuple[list[Injection], ...]
) -> tuple[World, list[dict[str, str]]]:
    """The item's workspace, and where each needle sentence landed (person, message id, sentence)."""
    world = World(id=item_id, name=f"Needle in the Persona {item_id.rsplit('-', 1)[-1]}")
    for person in ("alice", "bob", "charlie", "dave"):
        world.add_member(Member(person, person, person.capitalize()))
    needle_lines = []
    for conversation, pair, planned, start in zip(conversations, PAIRS, injections, CHAT_START, strict=True):
        ids = write_conversation(world, conversation, pair, planned, start)
        needle_lines += [{"person": i.person, "message_id": ids[i.line], "text": i.text} for i in planned]
    return world, needle_lines


def build_item(index: int, seed: int, first: Conversation, second: Conversation) -> tuple[BenchItem, World]:
    item_id = f"np-{index:03d}"
    rng = random.Random(f"np:{seed}:{index}")
    category = rng.choice(needles.CATEGORIES)
    needle, alice_decoy, dave_decoy = rng.sample(category.items, 3)
    kind = rng.choice(needles.KINDS)
    alice_texts = person_sentences(kind, "alice", needle, alice_decoy, category.noun, rng)
    dave_texts = person_sentences(kind, "dave", needle, dave_decoy, category.noun, rng)
    injections = (
        plan_injections(first, 1, "alice", alice_texts, rng),
        plan_injections(second, 2, "dave", dave_texts, rng),
    )
    world, needle_lines = build_world(item_id, (first, second), injections)
    item = BenchItem(
        id=item_id,
        dataset="np",
        world=f"worlds/{item_id}.json",
        asking=ASKING_PAIR,
        question=needles.QUESTIONS[kind].format(category=category.noun),
        metric=Metric.JUDGE,
        gold={"answer": needle, "alternatives": [needle]},
        evidence=tuple(line["message_id"] for line in needle_lines),
        provenance={
            "generator": "np",
            "seed": seed,
            "index": index,
            "kind": kind,
            "category": category.noun,
            "needle": needle,
            "decoys": {"alice": alice_decoy, "dave": dave_decoy},
            "conversations": {"alice-bob": first.source, "charlie-dave": second.source},
            "needle_lines": needle_lines,
        },
    )
    return item, world


def named_pool(data_dir: Path) -> list[tuple[Conversation, Conversation]]:
    """Each usable conversation named both ways: as Alice-Bob and as Charlie-Dave."""
    pool = []
    for conversation in load_conversations(data_dir):
        as_first = name_speakers(conversation, "Alice", "Bob")
        as_second = name_speakers(conversation, "Charlie", "Dave")
        if as_first is not None and as_second is not None and usable(as_first):
            pool.append((as_first, as_second))
    return pool


def build_persona_dataset(data_dir: Path, seed: int, *, count: int = ITEMS) -> Dataset:
    pool = named_pool(data_dir)
    if len(pool) < 2 * count:
        raise BenchGenerationError(f"only {len(pool)} usable persona conversations; {2 * count} needed")
    order = random.Random(f"np:{seed}:conversations").sample(range(len(pool)), 2 * count)
    items, worlds = [], {}
    for index in range(count):
        first, second = pool[order[2 * index]][0], pool[order[2 * index + 1]][1]
        item, world = build_item(index, seed, first, second)
        items.append(item)
        worlds[item.world] = world
    return Dataset("np", seed, items, worlds, persona_card(seed, items, worlds, usable=len(pool)))
