"""What one turn of an agent passes on, as the share screen leaves it: the words, facts, answer and the memory lines
they rest on (`Outgoing`), and how a memory line reads to a person (its text, where it comes from, never its id)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


# "[m0000013] #launch 2026-03-01 09:05 erin: text" (a message) or "[f2] text" (a note the agent made)
LINE_HEAD = re.compile(r"^\[(?P<id>[^\]]+)\]\s*(?:#(?P<channel>\S+) (?P<ts>\S+ \S+)(?: (?P<sender>[^:]+))?: )?")


@dataclass(frozen=True)
class SharedFact:
    rationale: str  # its id
    need: str
    value: str
    source: str


@dataclass
class Outgoing:
    """Everything one turn passes on: what an "ask me" member sees before approving, exactly as it would leave."""

    utterance: str
    facts: list[SharedFact] = field(default_factory=list)
    answer: str | None = None
    cited_lines: list[str] = field(default_factory=list)  # the memory lines the facts rest on, as the model saw them

    def text(self) -> str:
        """Exactly what leaves, each piece once: the words, facts and answer they do not already say, and the text of
        the memory lines passed on with them (consensus reads those)."""
        parts = [self.utterance.strip()] if self.utterance.strip() else []
        pieces = [(f.value, f"{f.need}: {f.value}") for f in self.facts]
        pieces += [(self.answer or "", self.answer or ""), *((line_text(c), line_text(c)) for c in self.cited_lines)]
        for said, piece in pieces:
            if said.strip() and not any(said.strip() in part for part in parts):
                parts.append(piece.strip())
        return "\n".join(parts)


def line_text(line: str) -> str:
    """A memory line's message text, without its id, channel, time and sender."""
    return LINE_HEAD.sub("", line)


def source_label(line: str) -> str:
    """Where a memory line comes from, as a person reads it ("#launch, 2026-03-01 09:05, erin"), never its id."""
    head = LINE_HEAD.match(line)
    if head is None or not head.group("channel"):
        return "a note your agent made from your messages"
    return ", ".join(p for p in (f"#{head.group('channel')}", head.group("ts"), head.group("sender")) if p)
