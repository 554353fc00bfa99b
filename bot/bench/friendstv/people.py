"""Who may hold or ask a FriendsTV rationale: named human characters, decided from the data's own markers.

The chat database has 140 members, among them a monkey, a TV, an ATM, groups ("guys", "gang [in kitchen]") and
anonymous roles ("person on phone", "nurse", "pizza guy"). No hand list decides who is a person; two markers of the
data do:

- **speaks**: the member sends at least one chat line with words outside stage directions (Marcel the monkey, the
  baby, "person on phone" and the other silent labels never do);
- **named**: some word of the member's label (titles like "Mr." and possessives like "Rachel's" left out) is written
  as a proper noun in the season-1 transcript's spoken lines: capitalized in the middle of a sentence (or after a
  title) at least once and never in lower case ("Paul", "Lowell"; not "woman", "guy", "nurse", "TV").

Members present in an episode are those in a DM channel that carries one of its lines (as speaker or listener).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from bot.bench.friendstv.alignment import spoken
from bot.store.world import World
from memory_ingest.sources.friendstv import SEASON_START


_WORD = re.compile(r"[A-Za-z]+")
# A capitalized word after a lower-case word, a comma or a title ("with Paul", "Mr. Heckles"): not a sentence start.
_MID_SENTENCE = re.compile(r"(?:(?<=[a-z,;] )|(?<=[MD]r\. )|(?<=Mrs\. ))[A-Z][a-z]+")
_LABEL_WORD = re.compile(r"[a-z.']+")


def word_casing(utterances: Iterable[str]) -> tuple[Counter[str], Counter[str]]:
    """Per word: how often it is written in lower case, and how often capitalized mid-sentence."""
    lower: Counter[str] = Counter()
    proper: Counter[str] = Counter()
    for text in utterances:
        said = spoken(text)
        lower.update(w for w in _WORD.findall(said) if w.islower())
        proper.update(w.lower() for w in _MID_SENTENCE.findall(said))
    return lower, proper


def is_named(label: str, lower: Counter[str], proper: Counter[str]) -> bool:
    """Some word of the label is a proper noun of the transcript (titles and possessives are not names)."""
    words = [w for w in _LABEL_WORD.findall(spoken(label).lower()) if not w.endswith((".", "'s"))]
    return any(proper[w] > 0 and lower[w] == 0 for w in words)


def speakers(world: World) -> set[str]:
    """Members who send at least one line with words outside stage directions."""
    return {m.sender_id for msgs in world.messages.values() for m in msgs if _WORD.search(spoken(m.text))}


def named_humans(world: World, utterances: Iterable[str]) -> frozenset[str]:
    lower, proper = word_casing(utterances)
    talking = speakers(world)
    named = (m for m in world.members if is_named(world.members[m].display_name, lower, proper))
    return frozenset(m for m in named if m in talking)


def present_by_episode(world: World) -> dict[int, frozenset[str]]:
    """Episode number (1-based) -> members in a DM channel that carries one of its lines."""
    present: dict[int, set[str]] = {}
    for channel in world.channels.values():
        for message in world.messages[channel.id]:
            present.setdefault((message.ts - SEASON_START).days + 1, set()).update(channel.member_ids)
    return {episode: frozenset(members) for episode, members in present.items()}
