"""What `evidence_reach.py` measures of one ask: where each gold line got to, and what the ask cost.

A gold line is one utterance; FriendsTV stores an utterance once per listener, so a line has several copies (ids)
and any copy counts. A line is in a prompt when its id is there followed by its words (an id in a list of sources
is not the line). Every figure is read from what actually happened: the prompts the model was sent (their text),
the lines the record says left an agent, the claims of the answer as recorded, the conversation tree and its calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.asks.read_models.transcripts import StoredConversation, Transcript
from bot.base.text_fold import stem, stems_of
from bot.bench.citations import claimed_sources, precision
from bot.llm.standin.reading import keywords_of, names_of, needs_of
from bot.llm.types import LLMRequest
from bot.store.world import World


OPENING_CHARS = 24  # how much of a line's words must follow its id for the line to count as in a prompt
OPENING_WINDOW = 200  # within this many characters after the id (channel, time and sender come between)


@dataclass
class GoldLine:
    """One gold line: the ids of all its copies, and who may see each copy."""

    ids: tuple[str, ...]
    holders: dict[str, frozenset[str]]  # copy id -> handles of the members who can see it
    opening: str = ""  # the start of its words, as prompts render them (whitespace folded)
    text: str = ""

    def seen_by(self, people: Iterable[str]) -> bool:
        wanted = set(people)
        return any(wanted & seers for seers in self.holders.values())

    def among(self, ids: set[str]) -> bool:
        return any(i in ids for i in self.ids)

    def named_in(self, text: str) -> bool:
        """The line itself is in the text: one of its ids, followed closely by the start of its words (an id alone,
        say in a list of sources, is not the line)."""
        for i in self.ids:
            if i in text:
                for found in re.finditer(rf"(?<![\w-]){re.escape(i)}(?![\w-])", text):
                    if self.opening in text[found.end() : found.end() + OPENING_WINDOW]:
                        return True
        return False


@dataclass
class ItemFigures:
    lines: int
    shown: int  # in any prompt sent to a model
    shared: int  # among the lines that left a colleague's (or a third party's) agent
    final: int  # in the requester's consensus prompt
    cited: int  # cited by a claim of the final answer
    reachable: int  # visible to the asking members (requester and colleagues): the ceiling without recursion
    wordless: int  # holding none of the words the question asks about (`words_shared`)
    needs_third_party: bool
    subconversations: int
    calls_critical_path: int
    prompt_tokens: int
    llm_calls: int
    wall_s: float = 0.0
    where: list[dict[str, Any]] = field(default_factory=list)  # per gold line, for the item-by-item listing
    # Beside recall: what the answer cites and how right it is (`bot.bench.citations`, `bot.bench.scoring`).
    cited_lines: int = 0  # distinct lines the answer's claims cite
    cited_gold: int = 0  # gold lines among them (evidence, or another line answering a part)
    score: float = 0.0  # the paper's metric, by rules
    em: float | None = None  # NP, FriendsTV: exact match (FriendsQA's, per part)
    f1: float | None = None  # token F1
    containment: float | None = None  # the gold anywhere in the answer: a labelled extra (it rewards pasting)
    answer: str = ""
    answer_tokens: int = 0
    answer_lines: int = 0


def gold_lines(world: World, ids: Iterable[str]) -> list[GoldLine]:
    """The item's evidence grouped into lines: copies of one utterance (same sender, text and time) are one line."""
    names = {m.id: m.name for m in world.members.values()}
    where: dict[str, tuple[Any, frozenset[str]]] = {}
    copies: dict[tuple[str, str, str], list[str]] = {}
    for channel_id, messages in world.messages.items():
        seers = frozenset(names[m] for m in world.channels[channel_id].member_ids)
        for message in messages:
            where[message.id] = (message, seers)
            copies.setdefault((message.sender_id, message.text, message.ts.isoformat()), []).append(message.id)
    lines: dict[tuple[str, str, str], GoldLine] = {}
    for mid in ids:
        message, _ = where[mid]
        key = (message.sender_id, message.text, message.ts.isoformat())
        opening = " ".join(message.text.split())[:OPENING_CHARS]
        lines[key] = GoldLine(tuple(copies[key]), {c: where[c][1] for c in copies[key]}, opening, message.text)
    return list(lines.values())


def words_shared(text: str, question: str) -> list[str]:
    """The words the question's parts ask about (as the stand-in reads them: names aside) that a line holds,
    compared by stem. The stand-in matches words and takes no name alone for an answer: a line sharing none
    ("you're gonna be an aunt." for "Why is Monica crying?") is one it can never take for an answer, only carry
    along with the lines around it."""
    needs = needs_of(question)
    names = {name for need in needs for name in names_of(need)}
    wanted = {stem(k) for need in needs for k in keywords_of(need) if k not in names}
    return sorted(wanted & stems_of(text.lower()))


def _text(request: LLMRequest) -> str:
    return "\n".join(m["content"] for m in request.messages)


def left_agents(transcript: Transcript, requester: str) -> set[str]:
    """Ids of the memory lines that left an agent other than the requester's: released by a shared turn (at any
    depth) or by a colleague's closing statement. Released lines reach the other side verbatim."""
    out: set[str] = set()
    for view in transcript.all_conversations():
        for turn in view.turns:
            if turn.agent != requester and not turn.data.get("declined"):
                out.update(turn.data.get("released") or [])
    sides = (transcript.consensus.data.get("sides") or []) if transcript.consensus else []
    for side in sides:
        if side.get("agent") != requester and side.get("crossed"):
            out.update(side.get("released") or [])
    return out


def critical_path(transcript: Transcript, *, seconds: bool = False) -> float:
    """Sequential model calls (or, with `seconds`, their seconds) from the question to the answer: each top-level
    talk's turns one after another (a sub-conversation inside the turn that opened it, parallel ones counted once:
    the longest), then that side's closing statement; the talks run side by side (the longest counts); then
    consensus."""

    def cost(latencies: list[float]) -> float:
        return sum(latencies) if seconds else len(latencies)

    statements: dict[int, list[float]] = {}
    for call in transcript.calls:
        if call.purpose == "statement" and call.conversation_id is not None:
            statements.setdefault(call.conversation_id, []).append(call.latency_s)
    consensus = cost([call.latency_s for call in transcript.calls if call.purpose == "consensus"])
    branches = [_path(view, cost) + cost(statements.get(view.row.id, [])) for view in transcript.conversations]
    return max(branches, default=0) + consensus


def _path(view: StoredConversation, cost: Callable[[list[float]], float]) -> float:
    total = 0.0
    for turn in view.turns:
        children = [_path(child, cost) for child in view.children if child.row.parent_turn == turn.idx]
        total += cost([c.get("latency_s", 0.0) for c in turn.data.get("llm_calls") or []]) + max(children, default=0)
    return total


def measure(
    lines: list[GoldLine],
    transcript: Transcript,
    requests: list[LLMRequest],
    *,
    requester: str,
    asking: list[str],
    question: str,
) -> ItemFigures:
    every = "\n".join(_text(r) for r in requests)
    final = "\n".join(_text(r) for r in requests if r.purpose == "consensus")
    left, cited = left_agents(transcript, requester), claimed_sources(transcript)
    where = []
    for line in lines:
        outside = sorted(set().union(*line.holders.values()) - set(asking)) if not line.seen_by(asking) else []
        where.append({
            "ids": list(line.ids), "shown": line.named_in(every), "shared": line.among(left),
            "final": line.named_in(final), "cited": line.among(cited), "held_only_by": outside,
            "words_shared": words_shared(line.text, question),
        })  # fmt: skip
    cost = transcript.cost()
    return ItemFigures(
        lines=len(lines),
        shown=sum(w["shown"] for w in where),
        shared=sum(w["shared"] for w in where),
        final=sum(w["final"] for w in where),
        cited=sum(w["cited"] for w in where),
        reachable=sum(line.seen_by(asking) for line in lines),
        wordless=sum(not w["words_shared"] for w in where),
        needs_third_party=any(not line.seen_by(asking) for line in lines),
        subconversations=sum(1 for view in transcript.all_conversations() if view.row.depth > 0),
        calls_critical_path=int(critical_path(transcript)),
        prompt_tokens=cost.prompt_tokens,
        llm_calls=cost.llm_calls,
        where=where,
    )


def summary(items: list[ItemFigures]) -> dict[str, Any]:
    total = sum(i.lines for i in items)
    hop = [i for i in items if i.needs_third_party]
    n = len(items) or 1
    return {
        "items": len(items),
        "lines": total,
        "shown": _share(sum(i.shown for i in items), total),
        "shared": _share(sum(i.shared for i in items), total),
        "final": _share(sum(i.final for i in items), total),
        "cited": _share(sum(i.cited for i in items), total),
        "cited_of_final": _share(sum(i.cited for i in items), sum(i.final for i in items)),
        "ceiling_without_recursion": _share(sum(i.reachable for i in items), total),
        "sharing_no_word": _share(sum(i.wordless for i in items), total),
        "needs_third_party_share": _share(len(hop), len(items)),
        # no item needs a third party: there is nothing to open a sub-conversation for (n/a, not 0)
        "subconversation_share": _share(sum(i.subconversations > 0 for i in hop), len(hop)) if hop else None,
        "cited_lines_mean": round(sum(i.cited_lines for i in items) / n, 2),
        "cited_precision": precision(sum(i.cited_gold for i in items), sum(i.cited_lines for i in items)),
        "answer_tokens_mean": round(sum(i.answer_tokens for i in items) / n, 1),
        "answer_lines_mean": round(sum(i.answer_lines for i in items) / n, 2),
        "score_mean": round(sum(i.score for i in items) / n, 4),
        "em_mean": _mean([i.em for i in items]),
        "f1_mean": _mean([i.f1 for i in items]),
        "containment_mean": _mean([i.containment for i in items]),
        "subconversations_per_item": round(sum(i.subconversations for i in items) / n, 2),
        "calls_critical_path_mean": round(sum(i.calls_critical_path for i in items) / n, 2),
        "llm_calls_mean": round(sum(i.llm_calls for i in items) / n, 2),
        "prompt_tokens_mean": round(sum(i.prompt_tokens for i in items) / n),
        "prompt_tokens_max": max((i.prompt_tokens for i in items), default=0),
    }


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0
