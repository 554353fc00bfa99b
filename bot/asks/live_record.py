"""The record of an ask in a live-memory workspace keeps ids, never text, and only for a while.

With live memory nothing a search returned is stored ("You must not store or copy any of the data retrieved from
this API", Slack's Real-time Search guide); the ask's own record would otherwise keep it (the lines each agent read,
its plans and utterances, the prompts, the consensus and the answer). Once the ask has ended, `keep_no_text` cuts
its record to the ids of what left an agent (evidence lines passed on, `released`, or cited by the answer) and then
blanks every text: utterances, plans, statements, search words, answers, errors (kept as "failed"). What stays is
ids, handles, states, counts and timings, and the answer's place in the platform (`final_channel_id`,
`final_message_id`): the answer there is the only copy. A record so cut has `final_text == ""` (`text_in_platform`).
Asks older than ASKWITH_TRANSCRIPT_RETENTION_DAYS are deleted (0: at once).

    await keep_no_text(db, ask_id)
    await expire_transcripts(db, workspace_id, days=30)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select

from bot.asks import models
from bot.store.db import Database


# JSON keys whose strings are ids, handles, states or times (kept); every other string of a record is text (blanked).
ID_KEYS = frozenset(
    "id key source sources cited released shown hit_ids turn conversation_id index dropped solved fake_solved "
    "agent member branch sender audience owners participants status kind policy verdict approval via skipped "
    "purpose model json_mode stop_reason channel ts started_at".split()
)


def text_in_platform(ask: models.Ask) -> bool:
    """The ask's record was cut to ids (`keep_no_text`): its text lives in the platform only."""
    return ask.final_text == ""


async def keep_no_text(db: Database, ask_id: int) -> int:
    """Cut the ask's record to the ids of what was shared, with no text; returns how many evidence lines were
    dropped."""
    async with db.session() as session, session.begin():
        conversations = list(
            (await session.execute(select(models.Conversation).where(models.Conversation.ask_id == ask_id))).scalars()
        )
        ids = [c.id for c in conversations]
        rows = list((await session.execute(select(models.Turn).where(models.Turn.conversation_id.in_(ids)))).scalars())
        consensus = await session.scalar(select(models.Consensus).where(models.Consensus.ask_id == ask_id))
        shared = _released([r.data for r in rows] + ([consensus.data] if consensus is not None else []))
        dropped = 0
        for row in rows:
            row.data, cut = _scrub(row.data, shared)
            dropped += cut
            row.data, row.plan, row.think, row.utterance = _ids(row.data), _ids(row.plan), _ids(row.think), ""
        if consensus is not None:
            consensus.data, cut = _scrub(consensus.data, shared)
            dropped += cut
            consensus.data, consensus.answer = _ids(consensus.data), ""
        queries = await session.execute(
            select(models.MemoryQuery).where(models.MemoryQuery.turn_id.in_([r.id for r in rows]))
        )
        for query in queries.scalars():
            query.hit_ids = [h for h in query.hit_ids if h in shared]
            query.params, query.error = _ids(query.params), _failed(query.error)
        for conversation in conversations:
            conversation.conclusion = None if conversation.conclusion is None else ""
            if conversation.depth > 0:  # a sub-conversation's question is an agent's words (the top one the ask's)
                conversation.question = ""
        calls = await session.execute(select(models.LLMCall).where(models.LLMCall.ask_id == ask_id))
        for call in calls.scalars():
            call.error = _failed(call.error)
        ask = await session.get(models.Ask, ask_id)
        if ask is not None:
            ask.answer = None if ask.answer is None else ""
            ask.final_text, ask.context = "", None
    return dropped


def _ids(value: Any, key: str | None = None) -> Any:
    """`value` with every string blanked but those under an id key (a memory line "[id] #chan ...: text" keeps its
    "[id]"); numbers, booleans and the shape stay, so readers still count, match ids and tell states."""
    if isinstance(value, dict):
        return {k: _ids(v, k if k in ID_KEYS else None if key is None else key) for k, v in value.items()}
    if isinstance(value, list):
        return [_ids(v, key) for v in value]
    if isinstance(value, str):
        if key is None:
            return ""
        return value[: value.index("]") + 1] if value.startswith("[") and "]" in value else value
    return value


def _failed(error: str | None) -> str | None:
    return "failed" if error else None


SHARED_KEYS = ("released", "cited", "sources")  # ids passed on, and ids the answer's claims rest on


def _released(records: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key in SHARED_KEYS:
                found.update(i for i in value.get(key) or [] if isinstance(i, str))
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    for record in records:
        walk(record)
    return found


def _scrub(value: Any, shared: set[str]) -> tuple[Any, int]:
    """A copy of a record with unshared evidence lines, prompts and extracted facts left out."""
    if isinstance(value, list):
        parts = [_scrub(v, shared) for v in value]
        return [p for p, _ in parts], sum(n for _, n in parts)
    if not isinstance(value, dict):
        return value, 0
    out: dict[str, Any] = {}
    dropped = 0
    for key, child in value.items():
        if key == "evidence" and isinstance(child, list):
            kept = [e for e in child if isinstance(e, dict) and e.get("id") in shared]
            out[key], dropped = kept, dropped + len(child) - len(kept)
        elif key == "evidence" and isinstance(child, dict):  # the consensus's lines, by id
            out[key] = {k: e for k, e in child.items() if k in shared}
            dropped += len(child) - len(out[key])
        elif key == "prompt" and isinstance(child, list):
            out[key] = []
        elif key == "facts":
            out[key] = None
        else:
            out[key], cut = _scrub(child, shared)
            dropped += cut
    return out, dropped


async def expire_transcripts(db: Database, workspace_id: int, *, days: int) -> int:
    """Delete the workspace's finished asks older than `days` (0: every finished ask); returns how many."""
    cutoff = datetime.now(UTC) - timedelta(days=days)
    finished = models.Ask.final_text.is_not(None)
    async with db.session() as session, session.begin():
        old = select(models.Ask.id).where(
            models.Ask.workspace_id == workspace_id, models.Ask.created_at <= cutoff, finished
        )
        ids = list((await session.execute(old)).scalars())
        if ids:
            await session.execute(delete(models.Ask).where(models.Ask.id.in_(ids)))
    return len(ids)
