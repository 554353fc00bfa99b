"""Build FriendsTV items the authors' way: two FriendsQA answers of one scene, each heard by a third party.

Per scene: the questions' answers are tied to chat lines (`rationale`), question pairs pass the authors' filter
(`pairing.scene_candidates`, `pairing.dropped_by`), a question is composed (`compose`), and an asking pair is drawn
from the social network so that most items need a third party's agent (`pairing.choose_asking`). Every item
records, per part, the hops the pair needs and the third parties who hold the rationale. With `anchor="hidden"` (the
"find who knows" variant, `hidden`) no part's question or anchor names the people the pair has to find.
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict
from pathlib import Path

from bot.bench.extraction import fold_apostrophes
from bot.bench.friendstv.alignment import ChatLine, assign_scenes, chat_lines, load_transcript
from bot.bench.friendstv.anchor import scene_anchor, scene_infos, short_name
from bot.bench.friendstv.card import AlignmentStats, friendstv_card
from bot.bench.friendstv.compose import Composed, Composer
from bot.bench.friendstv.friendsqa import PARTIAL_SPLIT, LoadStats, detokenize, load_questions
from bot.bench.friendstv.hidden import ANCHORS, HIDDEN, NAMED, VARIANT, NameMask, people_to_find
from bot.bench.friendstv.pairing import (
    NO_ASKER,
    SCENE_CAP,
    Asked,
    Network,
    choose_asking,
    dropped_by,
    scene_candidates,
)
from bot.bench.friendstv.people import named_humans, present_by_episode
from bot.bench.friendstv.rationale import Rationale, rationales_of
from bot.bench.items import BenchItem, Dataset, Metric
from bot.store.world import World
from memory_ingest.sources.friendstv import load_friendstv


WORLD_FILE = "worlds/friendstv.json"
HIDDEN_CARD = (
    "\n\n## Variant: find who knows\n\nNo part's question or scene anchor names the people holding an answer the "
    "asking pair cannot see: their names, and a title or place holding one, are left out of the anchor, and each "
    'mention in a question reads "someone", "someone else", ... The items, answers and asking pairs are the '
    "default's.\n"
)
SCENE_SHARE = 3  # items a FriendsQA dev/test scene (e21-e24) may give; e01-e20 scenes (the authors' train) give all


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


def make_item(
    index: int,
    asked: Asked,
    composed: Composed,
    evidence: tuple[list[str], list[str]],
    anchor: str,
    mask: NameMask | None = None,
) -> BenchItem:
    """`evidence`: per part, the messages of every line holding one of its answers (the paired line's first). The
    item's `evidence` stays the two paired lines; `answer_lines_by_part` lists every line that answers a part.
    `mask`: the "find who knows" variant's renaming of the people to find, applied to each part's question."""
    parts = [
        {
            "question": (mask or str)(detokenize(p.rationale.question.text)),
            "scene_anchor": anchor,
            "answer": detokenize(p.rationale.answer.text),
            "answers": sorted({detokenize(a.text) for a in p.rationale.answers}),
            "spans": sorted({detokenize(text) for text in p.rationale.question.spans}),
            "friendsqa_id": p.rationale.question.id,
            "split": p.rationale.question.split,
            "hops": p.hops,
            "third_parties": list(p.third_parties),
            "holders": sorted(p.reach),
            "line_holders": sorted(p.rationale.viewers),
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
            "split": first.question.split,
            "question_writer": composed.writer,
            "hops": asked.hops,
            "evidence_by_part": [list(first.line.message_ids), list(second.line.message_ids)],
            "answer_lines_by_part": [evidence[0], evidence[1]],
        },
    )


def scene_rationales(
    world: World, data_dir: Path, stats: AlignmentStats, load: LoadStats, humans: frozenset[str]
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
        found = rationales_of(world, question, lines, sender_of, humans)
        stats.with_evidence += bool(found)
        rationales[question.scene] += found
    stats.questions = load.questions
    return rationales, by_scene


def with_one_apostrophe(world: World) -> World:
    """The chat writes some apostrophes as `ī` ("wonīt"): its lines get the one the transcripts and answers use."""
    for channel, messages in world.messages.items():
        world.messages[channel] = [
            dataclasses.replace(m, text=fold_apostrophes(m.text)) if fold_apostrophes(m.text) != m.text else m
            for m in messages
        ]
    return world


def build_friendstv_dataset(
    data_dir: Path, seed: int, *, composer: Composer | None = None, anchor: str = NAMED
) -> Dataset:
    """`anchor`: "named" (the paper's items) or "hidden" (the "find who knows" variant: see `hidden`)."""
    if anchor not in ANCHORS:
        raise ValueError(f"anchor must be one of {', '.join(ANCHORS)}, not {anchor!r}")
    composer = composer or Composer(llm=None)
    world = with_one_apostrophe(load_friendstv(data_dir))
    stats, load = AlignmentStats(), LoadStats()
    humans = named_humans(world, (text for lines in load_transcript(data_dir).values() for _, text in lines))
    rationales, by_scene = scene_rationales(world, data_dir, stats, load, humans)
    network, present, infos = Network(world, humans), present_by_episode(world), scene_infos(data_dir)
    rng = random.Random(f"friendstv:{seed}")
    items: list[BenchItem] = []
    for scene in sorted(rationales):  # e01-e20 (train) first
        of_question, kept = _by_question(rationales[scene]), 0
        for first, second in scene_candidates(rationales[scene]):
            rule, asked = _verdict(first, second, of_question, network, present[int(scene[5:7])], rng)
            if rule is None and first.question.split != PARTIAL_SPLIT and kept >= SCENE_SHARE:
                rule = SCENE_CAP
            if rule is not None or asked is None:
                stats.dropped[rule or NO_ASKER] = stats.dropped.get(rule or NO_ASKER, 0) + 1
                continue
            kept += 1
            evidence = tuple(_evidence(r, of_question[r.question.id]) for r in (first, second))
            people = [s for s in first.question.speakers if short_name(s).lower() in humans or s.lower() in humans]
            spans = [*first.question.spans, *second.question.spans]
            asked_text = f"{detokenize(first.question.text)} {detokenize(second.question.text)}"
            hidden = people_to_find(asked)
            mask = NameMask(hidden, first.question.speakers, asked_text) if anchor == HIDDEN else None
            anchor_text = scene_anchor(infos[scene], people, spans, mask.forms if mask else ())
            composed = composer.compose(first, second, by_scene[scene], anchor_text)
            if mask is not None:
                composed = dataclasses.replace(composed, question=mask(composed.question))
            items.append(make_item(len(items), asked, composed, evidence, anchor_text, mask))
    stats.pairs = len(items) + stats.dropped.get(NO_ASKER, 0) + stats.dropped.get(SCENE_CAP, 0)
    stats.no_asker = stats.dropped.get(NO_ASKER, 0)
    stats.scenes = len({item.provenance["scene"] for item in items})
    stats.humans = len(humans)
    card = friendstv_card(seed, items, world, stats, load, composer.writer)
    if anchor == HIDDEN:
        return Dataset("friendstv", seed, items, {WORLD_FILE: world}, card + HIDDEN_CARD, variant=VARIANT)
    return Dataset("friendstv", seed, items, {WORLD_FILE: world}, card)


def _verdict(
    first: Rationale,
    second: Rationale,
    of_question: dict[str, list[Rationale]],
    network: Network,
    present: frozenset[str],
    rng: random.Random,
) -> tuple[str | None, Asked | None]:
    """(the rule that drops the pair, or None; its asking pair). A part's reach is the holders of every line that
    answers its question."""
    rule = dropped_by(first, second)
    if rule is not None:
        return rule, None
    reach = tuple(frozenset().union(*(r.viewers for r in of_question[x.question.id])) for x in (first, second))
    asked = choose_asking(network, (first, second), (reach[0], reach[1]), present, rng)
    return (NO_ASKER if asked is None else None), asked


def _by_question(rationales: list[Rationale]) -> dict[str, list[Rationale]]:
    found: dict[str, list[Rationale]] = defaultdict(list)
    for rationale in rationales:
        found[rationale.question.id].append(rationale)
    return found


def _evidence(rationale: Rationale, same_question: list[Rationale]) -> list[str]:
    """The paired line's messages, then those of the question's other answer lines (any of them answers it)."""
    lines = [rationale.line] + [r.line for r in same_question if r.line != rationale.line]
    return [mid for line in lines for mid in line.message_ids]
