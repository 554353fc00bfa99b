"""An agent's notebook: the evidence lines it has read in this ask, kept across turns.

Lines are added as searches (or a whole-history read) find them, one per message id, and dropped only when their
member excludes their channel mid-ask (`withdraw`, at every send: `bot.consent.exclusions`). What a prompt shows is
chosen under the token budget, lines cited by the plan first, then the lines most relevant to the open rationales,
and the prompt says how many were left out. The notebook is rebuilt from the saved turns when a
killed ask is resumed (each turn records the lines it added: `TurnStep.evidence`).

A colleague's notebook leaves its agent only as far as its shares were allowed: `release` marks the lines a shared
turn passed on (those the share screen let through, `bot.consent.screen`), and only released lines reach consensus.

    notebook.add(lines, turn=3)
    shown, cut = notebook.select(plan, budget_tokens=6000)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace

from bot.agents.evidence import EvidenceLine, chronological, fit, overlap, words
from bot.agents.plan import Plan


@dataclass
class Notebook:
    lines: dict[str, EvidenceLine] = field(default_factory=dict)  # by id, in the order they were found
    released: set[str] = field(default_factory=set)  # ids passed on to the other agents by shared turns
    whole_history: bool = False  # everything the member can see is in it (whole-history mode)
    # ids added or shown to the model since the member's settings were last read: what pending words may rest on
    read_since: set[str] = field(default_factory=set)
    excluded: frozenset[str] = frozenset()  # the member's excluded channels when it was last checked against them

    def add(self, found: Iterable[EvidenceLine], *, turn: int) -> list[EvidenceLine]:
        """Keep the lines not already noted; returns those (as recorded with the turn that found them)."""
        added = []
        for line in found:
            if line.id not in self.lines:
                self.lines[line.id] = replace(line, turn=turn)
                added.append(self.lines[line.id])
        self.read_since.update(line.id for line in added)
        return added

    def withdraw(self, gone: Callable[[EvidenceLine], bool]) -> tuple[list[EvidenceLine], bool]:
        """Drop the lines `gone` names (their channel was excluded since they were read): from the notebook and
        from what it released. Returns them, and whether any was added or shown since the last call (then the words
        the agent is about to pass on may rest on them)."""
        dropped = [line for line in self.lines.values() if gone(line)]
        for line in dropped:
            del self.lines[line.id]
            self.released.discard(line.id)
        pending = any(line.id in self.read_since for line in dropped)
        self.read_since = set()
        return dropped, pending

    def restore(self, added: Iterable[EvidenceLine], released: Iterable[str], *, whole_history: bool) -> None:
        """Replay one saved turn's additions (resuming a killed ask)."""
        for line in added:
            self.lines.setdefault(line.id, line)
        self.released.update(released)
        self.whole_history = self.whole_history or whole_history

    def release(self, ids: Iterable[str]) -> list[str]:
        fresh = [i for i in ids if i in self.lines and i not in self.released]
        self.released.update(fresh)
        return fresh

    # ------------------------------------------------------------------ reading
    def select(
        self, plan: Plan, budget_tokens: int, *, only: set[str] | None = None, question: str = ""
    ) -> tuple[list[EvidenceLine], int]:
        """What a prompt shows: cited lines, then by relevance to the open rationales; chronological; and the count
        of lines cut by the budget."""
        pool = [line for line in self.lines.values() if only is None or line.id in only]
        shown, cut = select_lines(pool, plan, budget_tokens, question=question)
        self.read_since.update(line.id for line in shown)
        return shown, cut

    def shared_lines(self) -> list[EvidenceLine]:
        return [line for line in self.lines.values() if line.id in self.released]


def select_lines(
    pool: list[EvidenceLine], plan: Plan, budget_tokens: int, *, question: str = ""
) -> tuple[list[EvidenceLine], int]:
    cited = cited_ids(plan, {line.id for line in pool})
    open_needs = plan.unknowns or plan.rationales
    wanted = words(" ".join(r.need for r in open_needs) or question)
    ranked = sorted(
        pool, key=lambda line: (line.id not in cited, -overlap(line, wanted), -line.score, line.turn, line.id)
    )
    shown, cut = fit(ranked, budget_tokens)
    return chronological(shown), cut


def cited_ids(plan: Plan, known: Collection[str] | None = None) -> set[str]:
    """Message ids the plan's values rest on."""
    return {i for r in plan.known for i in ids_in(r.source, known)}


def ids_in(text: str, known: Collection[str] | None = None) -> list[str]:
    """Message ids written in a source or an utterance ("[m12]", "m12, m14", "bob:m12"). A platform id may itself
    hold colons (Slack's "C123:1700000000.000100"): given the `known` ids, the longest known tail of a part is its id,
    so "bob:C123:1700000000.000100" names "C123:1700000000.000100"."""
    found = []
    for part in re.split(r"[\s,;]+", text):
        part = part.strip("[]().")
        tails = [part.split(":", k)[k] for k in range(part.count(":") + 1)]
        if known is not None and (tail := next((t for t in tails if t in known), None)):
            found.append(tail)
            continue
        if ":" in part and "session:" not in part:
            part = tails[-1]  # "bob:m12", "blackboard:bob:m12": relayed, the id is last
        elif "session:" in part:
            part = part[part.index("session:") :]
        if part:
            found.append(part)
    return list(dict.fromkeys(found))
