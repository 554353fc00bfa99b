"""Evidence lines and the token budget they are shown under.

A line is one message an agent read (id, sender, time, channel, text) or one session summary. Search results of
several queries are merged by relevance (reciprocal rank fusion, so a fuzzy hit can outrank a clear one), one line
per message id. What a prompt shows is chosen by `fit`: the most relevant lines that fit the budget, and a count of
what was cut, which the prompt states ("12 more lines not shown").

    lines = fuse([clear_lines, fuzzy_lines])
    shown, cut = fit(lines, budget_tokens=6000)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any

from bot.llm.tokens import count_tokens
from bot.memory.types import MessageView


LINE_CHARS = 600  # one message longer than this is shortened (a budget is shared by many lines)
RRF_K = 10  # reciprocal rank fusion: score = sum over queries of 1 / (RRF_K + rank)
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]+")


@dataclass(frozen=True)
class EvidenceLine:
    id: str  # message platform id, or "session:<key>" for a session summary
    sender: str
    ts: str  # "YYYY-MM-DD HH:MM"
    channel: str
    text: str
    score: float = 0.0  # relevance from the searches that returned it (0: read whole, not searched)
    via: str = ""  # clear | fuzzy | history | "<handle>'s agent" (relayed from a colleague's agent)
    turn: int = -1  # index of the turn that added it

    def render(self) -> str:
        if self.via == "facts":  # the private model's words about a message, not the message
            return f"[{self.id}] {self.text}"
        who = f" {self.sender}" if self.sender else ""
        return f"[{self.id}] #{self.channel} {self.ts}{who}: {self.text}"

    # Computed once per line: a line is measured and matched in every prompt of the ask that shows it.
    @cached_property
    def tokens(self) -> int:
        return count_tokens(self.render()) + 1

    @cached_property
    def stems(self) -> frozenset[str]:
        return frozenset(w[:5] for w in words(f"{self.sender} {self.text}"))

    def dict(self) -> dict[str, Any]:
        # Not `asdict`, which deep-copies every field: every turn's record holds hundreds of lines.
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> EvidenceLine:
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__})

    @classmethod
    def of_message(cls, message: MessageView, *, via: str, score: float = 0.0) -> EvidenceLine:
        return cls(
            message.id, message.sender, f"{message.ts:%Y-%m-%d %H:%M}", message.channel_name, _short(message.text),
            score, via,
        )  # fmt: skip


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


def fuse(rankings: Iterable[Sequence[EvidenceLine]]) -> list[EvidenceLine]:
    """One list, best first, from several ranked lists: reciprocal rank fusion, one line per id."""
    best: dict[str, EvidenceLine] = {}
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, line in enumerate(ranking):
            scores[line.id] = scores.get(line.id, 0.0) + 1.0 / (RRF_K + rank)
            best.setdefault(line.id, line)
    ordered = sorted(best, key=lambda i: -scores[i])
    return [replace(best[i], score=round(scores[i], 4)) for i in ordered]


def words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def overlap(line: EvidenceLine, wanted: frozenset[str]) -> int:
    """How many of the wanted words the line holds (by a crude stem, so "launch" matches "launching")."""
    if not wanted:
        return 0
    counts = _stem_counts(wanted)
    shared = line.stems & counts.keys()
    return sum(map(counts.__getitem__, shared)) if shared else 0  # most lines share none: no sum to start


@lru_cache(maxsize=1_024)
def _stem_counts(wanted: frozenset[str]) -> Counter[str]:
    """Wanted words by stem: one set intersection per line instead of a loop over the words (every notebook line
    is ranked against the same wanted words at every turn)."""
    return Counter(w[:5] for w in wanted)


def fit(lines: Sequence[EvidenceLine], budget_tokens: int) -> tuple[list[EvidenceLine], int]:
    """The leading lines (callers order by priority) that fit the budget, and how many did not."""
    shown: list[EvidenceLine] = []
    used = 0
    for line in lines:
        if used + line.tokens > budget_tokens:
            continue  # a shorter line further down may still fit
        shown.append(line)
        used += line.tokens
    return shown, len(lines) - len(shown)


def chronological(lines: Iterable[EvidenceLine]) -> list[EvidenceLine]:
    """Shown lines read best in the order they were said (summaries last)."""
    return sorted(lines, key=lambda line: (line.id.startswith("session:"), line.ts, line.id))
