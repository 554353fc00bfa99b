"""Which question pairs become items, and who asks them.

The filter is the authors' (`make_qa_dataset.py` of the iAgents FriendsTV folder): in a scene with more than two
speakers and at least two rationale lines, two answers of different questions form a pair when their lines were heard
by different sets of characters, and each line has a listener outside the other line's listeners and outside the two
lines' speakers (their `QA1_third_party` / `QA2_third_party`). Listeners are those of the chat line itself (the
authors pooled every line with the same text across the season, so "Hi." inherited listeners from other scenes).

The asking pair is chosen afterwards from the social network of named human characters (`people`), among those
present in the scene's episode: hops are counted from the pair to the holders of any line with one of the question's
answers, over DM channels (0 = the pair sees one, 1 = someone the pair talks with does, ...); an item needs the
largest of its two parts' hops.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import combinations

from bot.bench.extraction import normalize, plainly_states, states_inside
from bot.bench.friendstv.rationale import Rationale
from bot.store.world import World


_POSSESSIVE = re.compile(r"['\u2019]s\b")
MIN_MESSAGES = 40  # an asker is a character seen in at least this many messages (walk-ons are not asked)
ONE_HOP_SHARE = 0.8  # items whose asking pair is drawn among pairs that need a third party (the paper's emphasis)
FAR = 99  # no holder within reach


@dataclass(frozen=True)
class Part:
    rationale: Rationale
    hops: int
    third_parties: tuple[str, ...]  # holders the pair talks with directly (for hops == 1)
    reach: frozenset[str] = frozenset()  # holders of any line with one of the question's answers


@dataclass(frozen=True)
class Asked:
    asking: tuple[str, str]
    parts: tuple[Part, Part]

    @property
    def hops(self) -> int:
        return max(part.hops for part in self.parts)


def third_parties_differ(first: Rationale, second: Rationale) -> bool:
    """The authors' `QA1_third_party` / `QA2_third_party`: each line has a holder the other line lacks, no speaker."""
    if first.question.id == second.question.id or first.viewers == second.viewers:
        return False
    speakers = {first.speaker, second.speaker}
    return bool(first.viewers - second.viewers - speakers) and bool(second.viewers - first.viewers - speakers)


def gives_away(first: Rationale, second: Rationale) -> bool:
    """One question holds the other's answer, or one part's answer would pass for both."""
    return leaks(first, second) or leaks(second, first) or overlaps(first, second)


def contains(text: str, span: str) -> bool:
    """The normalized span is in the normalized text, on word boundaries ("Marcel" in "How does Monica call
    Marcel?")."""
    key = _plain(span)
    return bool(key) and f" {key} " in f" {_plain(text)} "


def _plain(text: str) -> str:
    """Normalized, possessives read as their name ("Monica and Rachel's" holds "Rachel")."""
    return normalize(_POSSESSIVE.sub("", text))


def overlaps(first: Rationale, second: Rationale) -> bool:
    """True when an annotated span of one part would pass for the other (it contains one of the other's spans, or
    states a short answer inside one): one answer alone would pass for both."""
    ones, twos = list(first.question.spans), list(second.question.spans)
    return any(passes(a, twos) for a in ones) or any(passes(b, ones) for b in twos)


def passes(answer: str, spans: list[str]) -> bool:
    """The rules scorer would accept `answer` for a part with these spans (`scoring.normalized_match`)."""
    return any(plainly_states(answer, span) for span in spans) or states_inside(answer, spans)


def leaks(given: Rationale, other: Rationale) -> bool:
    """True when `other`'s question text contains one of `given`'s annotated spans."""
    return any(contains(other.question.text, span) for span in given.question.spans)


def answers_itself(rationale: Rationale) -> bool:
    """True when the question's own text contains one of its annotated spans ("How does Monica call Marcel?")."""
    return leaks(rationale, rationale)


# Why a candidate pair of a scene is not an item, in the order the rules are applied (the card counts each).
SELF_ANSWER = "a question contains one of its own answers"
AUTHORS_FILTER = "the authors' third-party filter (all listeners)"
NOT_HUMAN = "a holder or third party is not a named human"
GIVEN_AWAY = "one question holds the other's answer, or one answer passes for both"
NO_ASKER = "no asking pair present in the scene's episode"
SCENE_CAP = "the scene (FriendsQA dev/test) already gave its share of items"
DROP_RULES = (SELF_ANSWER, AUTHORS_FILTER, NOT_HUMAN, GIVEN_AWAY, NO_ASKER, SCENE_CAP)


def scene_candidates(rationales: list[Rationale]) -> Iterator[tuple[Rationale, Rationale]]:
    """Every pair of rationales of a scene the authors' loop considers (answers on one line are one rationale)."""
    if len({r.line.message_ids for r in rationales}) < 2:
        return
    if rationales and len(rationales[0].question.speakers) <= 2:
        return  # the authors skip two-person scenes
    yield from combinations(rationales, 2)


def dropped_by(first: Rationale, second: Rationale) -> str | None:
    """The first rule that drops the pair (see DROP_RULES), or None when it passes the filters."""
    if answers_itself(first) or answers_itself(second):
        return SELF_ANSWER
    if not third_parties_differ(replace(first, viewers=first.everyone), replace(second, viewers=second.everyone)):
        return AUTHORS_FILTER
    if not third_parties_differ(first, second):
        return NOT_HUMAN
    return GIVEN_AWAY if gives_away(first, second) else None


class Network:
    """Who talks with whom (a DM channel between two named humans), and who may ask."""

    def __init__(self, world: World, humans: frozenset[str]) -> None:
        self.friends: dict[str, set[str]] = {m: set() for m in humans}
        seen: dict[str, int] = dict.fromkeys(humans, 0)
        for channel in world.channels.values():
            members = set(channel.member_ids) & humans
            for member in members:
                self.friends[member] |= members - {member}
                seen[member] += len(world.messages[channel.id])
        self.askers = sorted(m for m, n in seen.items() if n >= MIN_MESSAGES)
        self.pairs = [(a, b) for a in self.askers for b in self.askers if a != b and b in self.friends[a]]

    def distance(self, pair: tuple[str, str], holders: frozenset[str]) -> int:
        frontier, reached = set(pair), set(pair)
        for hops in range(4):
            if frontier & holders:
                return hops
            frontier = {f for m in frontier for f in self.friends[m]} - reached
            reached |= frontier
        return FAR

    def part(self, pair: tuple[str, str], rationale: Rationale, reach: frozenset[str]) -> Part:
        hops = self.distance(pair, reach)
        near = self.friends[pair[0]] | self.friends[pair[1]]
        third = tuple(sorted((reach & near) - set(pair))) if hops == 1 else ()
        return Part(rationale, hops, third, reach)


def choose_asking(
    network: Network,
    rationales: tuple[Rationale, Rationale],
    reach: tuple[frozenset[str], frozenset[str]],  # per part: the holders of any line with one of its answers
    present: frozenset[str],  # members present in the scene's episode
    rng: random.Random,
) -> Asked | None:
    """An asking pair for two rationales: mostly one that needs a third party, else one that splits them."""
    first, second = rationales
    classes: dict[str, list[Asked]] = {"one_side_and_third": [], "third_only": [], "split": [], "far": []}
    for pair in network.pairs:
        if not set(pair) <= present:
            continue  # the authors pair people of the scene's world, not Mrs. Geller asking about the pilot
        if first.viewers <= set(pair) or second.viewers <= set(pair):
            continue  # each rationale keeps a listener outside the asking pair (a third party who heard it)
        parts = (network.part(pair, first, reach[0]), network.part(pair, second, reach[1]))
        asked = Asked(pair, parts)
        hops = sorted(part.hops for part in asked.parts)
        if hops == [0, 1]:
            classes["one_side_and_third"].append(asked)
        elif hops == [1, 1]:
            classes["third_only"].append(asked)
        elif hops == [0, 0] and _splits(pair, first, second):
            classes["split"].append(asked)
        elif hops[1] == 2:
            classes["far"].append(asked)
    order = ["one_side_and_third", "third_only", "split", "far"]
    if rng.random() >= ONE_HOP_SHARE:
        order = ["split", *order[:2], "far"]
    for name in order:
        if classes[name]:
            return rng.choice(classes[name])
    return None


def _splits(pair: tuple[str, str], first: Rationale, second: Rationale) -> bool:
    """The asker sees only the first rationale and the other member only the second (the pair needs each other)."""
    a, b = pair
    return a in first.viewers - second.viewers and b in second.viewers - first.viewers
