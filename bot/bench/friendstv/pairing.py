"""Which question pairs become items, and who asks them.

The filter is the authors' (`make_qa_dataset.py` of the iAgents FriendsTV folder): in a scene with more than two
speakers and at least two rationale lines, two answers of different questions form a pair when their lines were heard
by different sets of characters, and each line has a listener outside the other line's listeners and outside the two
lines' speakers (their `QA1_third_party` / `QA2_third_party`). Listeners are those of the chat line itself (the
authors pooled every line with the same text across the season, so "Hi." inherited listeners from other scenes).

The asking pair is chosen afterwards from the social network: hops are counted from the pair to a rationale's
holders over DM channels (0 = the pair sees it, 1 = someone the pair talks with sees it, ...); an item needs the
largest of its two parts' hops.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations

from bot.bench.friendstv.friendsqa import squash
from bot.bench.friendstv.rationale import Rationale
from bot.world import World


MIN_MESSAGES = 40  # an asker is a character seen in at least this many messages (walk-ons are not asked)
NON_HUMAN = frozenset({  # characters and labels no one would give a personal agent
    "marcel", "tv", "atm", "script", "voice", "dick clark (tv)", "central perk audience", "guys", "girls", "boys",
    "gang [in kitchen]", "rachel's friends", "cute doctors", "sandy's kids", "baby", "carol's baby", "jay leno",
    "security personnel", "person on phone",
})  # fmt: skip
ONE_HOP_SHARE = 0.8  # items whose asking pair is drawn among pairs that need a third party (the paper's emphasis)
FAR = 99  # no holder within reach


@dataclass(frozen=True)
class Part:
    rationale: Rationale
    hops: int
    third_parties: tuple[str, ...]  # holders the pair talks with directly (for hops == 1)


@dataclass(frozen=True)
class Asked:
    asking: tuple[str, str]
    parts: tuple[Part, Part]

    @property
    def hops(self) -> int:
        return max(part.hops for part in self.parts)


def authors_filter(first: Rationale, second: Rationale) -> bool:
    """The authors' pair filter, and no answer given away by the other question."""
    if first.question.id == second.question.id or first.viewers == second.viewers:
        return False
    speakers = {first.speaker, second.speaker}
    if not (first.viewers - second.viewers - speakers) or not (second.viewers - first.viewers - speakers):
        return False
    return not (leaks(first, second) or leaks(second, first) or overlaps(first, second))


def overlaps(first: Rationale, second: Rationale) -> bool:
    """True when one part's answer contains the other's: then one answer alone would pass for both."""
    ones, twos = ([squash(a.text) for a in r.answers] for r in (first, second))
    return any(a and b and (a in b or b in a) for a in ones for b in twos)


def leaks(given: Rationale, other: Rationale) -> bool:
    """True when `other`'s question text contains one of `given`'s answers."""
    asked = squash(other.question.text)
    return any(squash(a.text) and squash(a.text) in asked for a in given.answers)


def scene_pairs(rationales: list[Rationale]) -> Iterator[tuple[Rationale, Rationale]]:
    """Pairs of rationales of a scene that pass the filter (answers on one line are one rationale), file order."""
    if len({r.line.message_ids for r in rationales}) < 2:
        return
    if rationales and len(rationales[0].question.speakers) <= 2:
        return  # the authors skip two-person scenes
    for first, second in combinations(rationales, 2):
        if authors_filter(first, second):
            yield first, second


class Network:
    """Who talks with whom (a DM channel), and who may ask."""

    def __init__(self, world: World) -> None:
        self.friends: dict[str, set[str]] = {m: set() for m in world.members}
        seen: dict[str, int] = dict.fromkeys(world.members, 0)
        for channel in world.channels.values():
            members = set(channel.member_ids)
            for member in members:
                self.friends[member] |= members - {member}
                seen[member] += len(world.messages[channel.id])
        self.askers = sorted(m for m, n in seen.items() if n >= MIN_MESSAGES and m not in NON_HUMAN)
        self.pairs = [(a, b) for a in self.askers for b in self.askers if a != b and b in self.friends[a]]

    def distance(self, pair: tuple[str, str], holders: frozenset[str]) -> int:
        frontier, reached = set(pair), set(pair)
        for hops in range(4):
            if frontier & holders:
                return hops
            frontier = {f for m in frontier for f in self.friends[m]} - reached
            reached |= frontier
        return FAR

    def part(self, pair: tuple[str, str], rationale: Rationale) -> Part:
        hops = self.distance(pair, rationale.viewers)
        near = self.friends[pair[0]] | self.friends[pair[1]]
        third = tuple(sorted((rationale.viewers & near) - set(pair))) if hops == 1 else ()
        return Part(rationale, hops, third)


def choose_asking(network: Network, first: Rationale, second: Rationale, rng: random.Random) -> Asked | None:
    """An asking pair for two rationales: mostly one that needs a third party, else one that splits them."""
    classes: dict[str, list[Asked]] = {"one_side_and_third": [], "third_only": [], "split": [], "far": []}
    for pair in network.pairs:
        if first.viewers <= set(pair) or second.viewers <= set(pair):
            continue  # each rationale keeps a listener outside the asking pair (a third party who heard it)
        asked = Asked(pair, (network.part(pair, first), network.part(pair, second)))
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
