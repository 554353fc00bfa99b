"""Cited precision: of the lines an answer cites, how many are gold evidence; recall's necessary companion (an answer
citing everything its members said reaches every gold line and is still mostly noise).

    figures = cited_figures(world, item, {"m0000012", "m0000040"})
    # -> {"cited": 2, "cited_gold": 1, "gold_lines": 2}

A line is one utterance: FriendsTV stores an utterance once per listener, so its copies (same sender, words and time)
count once, and citing any copy cites the line. The gold lines are the item's evidence and, where the item lists
them, every other line that answers one of its parts (`answer_lines_by_part`): citing such a line is no noise.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bot.asks.read_models.transcripts import Transcript
from bot.bench.items import BenchItem
from bot.store.world import World


LineKey = tuple[str, str, str]  # sender, words, time


def line_keys(world: World) -> dict[str, LineKey]:
    return {m.id: (m.sender_id, m.text, m.ts.isoformat()) for msgs in world.messages.values() for m in msgs}


def gold_ids(item: BenchItem) -> set[str]:
    extra = item.provenance.get("answer_lines_by_part") or []
    return {*item.evidence, *(i for part in extra for i in part)}


def claimed_sources(transcript: Transcript) -> set[str]:
    """The message ids the final answer's claims cite, as recorded."""
    claims = (transcript.consensus.data.get("claims") or []) if transcript.consensus else []
    return {s for claim in claims for s in claim.get("sources") or []}


def cited_figures(
    world: World, item: BenchItem, cited: Iterable[str], keys: dict[str, LineKey] | None = None
) -> dict[str, Any]:
    """`cited`: the message ids the answer's claims cite (ids the workspace does not hold count as lines too)."""
    keys = keys if keys is not None else line_keys(world)
    lines = {keys.get(i, ("", i, "")) for i in cited}
    gold = {keys[i] for i in gold_ids(item) if i in keys}
    return {"cited": len(lines), "cited_gold": len(lines & gold), "gold_lines": len(gold)}


def precision(cited_gold: int, cited: int) -> float | None:
    """Gold lines among the cited; None when nothing was cited (no precision to speak of, not 0 or 1)."""
    return round(cited_gold / cited, 4) if cited else None
