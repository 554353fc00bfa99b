"""Who contributed to an ask, computed from what each colleague's agent actually let out.

    lines = shared_lines(turns, statements)              # the outbox records kept with turns and statements
    by_agent = contributions(lines, requester="alice", known=evidence_ids)
    by_agent["dave"].own_sources                          # ["m0000013"]: lines of Dave's memory it shared

Input is narrow on purpose (`SharedLine`: whose agent, the text that left it): any record of what left an agent can
feed it. A colleague is credited only with message ids of its own memory: an id it relays from another agent (written
"alice:m12", "blackboard:bob:m12") is that agent's, so facts from the requester's own memory credit nobody. Texts are
shown with their bracketed ids removed (`without_ids`): the sources are rendered as links beside them instead.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.consent.outbox import shared_items


BRACKETED = re.compile(r"\s*\[([^\[\]\n]{1,300})\]")
SEPARATORS = re.compile(r"[\s,;]+")


@dataclass(frozen=True)
class SharedLine:
    """One text that left a colleague's agent (an utterance, a statement) in an ask."""

    agent: str  # handle of the member whose agent let it out
    text: str  # as it left, ids included ("... [m12]", "... [alice:m12]")


@dataclass
class Contribution:
    agent: str
    said: list[str] = field(default_factory=list)  # its lines, ids removed, in order
    own_sources: list[str] = field(default_factory=list)  # ids of its own member's messages it cited, deduplicated


Record = dict[str, Any]


def shared_lines(turns: Iterable[tuple[str, Record]], statements: Iterable[Record]) -> list[SharedLine]:
    """From the outbox records kept with the ask's turns and consensus statements (`bot.consent.outbox.shared_items`):
    the turns and statements that left their agent, exactly as they left. A recruit question went to a third
    member's agent, not towards the answer: it credits nobody."""
    records = [*(data for _, data in turns), *statements]
    return [
        SharedLine(item.member, item.text) for item in shared_items(records) if item.kind != "recruit" and item.text
    ]


def contributions(lines: Iterable[SharedLine], *, requester: str, known: Collection[str]) -> dict[str, Contribution]:
    """Each colleague's lines and own sources. `known`: the message ids the ask's evidence holds (platform ids may
    contain colons, so an id is matched as the longest known tail of what is written)."""
    found: dict[str, Contribution] = {}
    for line in lines:
        if line.agent == requester:
            continue
        contribution = found.setdefault(line.agent, Contribution(line.agent))
        if (text := without_ids(line.text)) and text not in contribution.said:
            contribution.said.append(text)
        for message_id in own_ids(line.text, line.agent, known):
            if message_id not in contribution.own_sources:
                contribution.own_sources.append(message_id)
    return found


def own_ids(text: str, agent: str, known: Collection[str]) -> list[str]:
    """The ids in `text`'s brackets that name `agent`'s own memory: bare ("m12"), or prefixed with the agent itself."""
    ids = []
    for bracket in BRACKETED.findall(text):
        for part in SEPARATORS.split(bracket):
            part = part.strip("().")
            if message_id := _own_id(part, agent, known):
                ids.append(message_id)
    return ids


def without_ids(text: str) -> str:
    """`text` without its bracketed message ids ("Room 4B [m12]." -> "Room 4B.")."""
    return " ".join(BRACKETED.sub("", text).split())


def _own_id(part: str, agent: str, known: Collection[str]) -> str | None:
    if part in known:
        return part
    if "session:" in part:  # a fuzzy-memory session summary: own unless relayed under another agent's name
        prefix, _, number = part.partition("session:")
        return f"session:{number}" if prefix in ("", f"{agent}:") else None
    prefixes = part.split(":")
    for cut in range(1, len(prefixes)):
        tail = ":".join(prefixes[cut:])
        if tail in known:
            return tail if prefixes[:cut] == [agent] else None  # relayed from another agent or the blackboard
    return None
