"""Clear memory: ranked full-text search over the messages one viewer can see.

    memory = ClearMemory(db)
    hits = await memory.search(viewer, ClearQuery(keywords=("central perk", "coffee"), context_window=2))

Ranking is the engine's own: SQLite FTS5 `bm25()` over `message_fts`, PostgreSQL `ts_rank_cd()` over the generated
`message.text_tsv`. Keywords are OR-ed, so a message matching more of them ranks higher; a keyword of several words
is a phrase and must match whole. Viewer scoping is part of every statement (`visible_channels(viewer)` inside the
SQL), for hits and for their context alike, so nothing outside the viewer's channels, or inside a channel their
policy excludes, is ever read. Fan-out copies of one line (same sender, text and time, e.g. one utterance stored in
several DMs) collapse into one hit, counted in `ClearHit.duplicates`.

Blank keywords are a malformed query and raise `MemoryQueryError`; keywords that are all stop words return [].
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import reduce

from sqlalchemy import (
    ColumnElement,
    FromClause,
    Row,
    Select,
    func,
    literal,
    literal_column,
    or_,
    select,
    table,
    tuple_,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from bot.errors import MemoryQueryError
from bot.memory.keywords import Phrase, fts5_expression, plain_text, search_terms
from bot.memory.types import ClearHit, ClearQuery, MessageView, Viewer
from bot.memory.visibility import visible_channels
from bot.store import models
from bot.store.db import Database


MAX_LIMIT = 100
MAX_CONTEXT_WINDOW = 20
M = models.Message
ENGLISH = literal_column("'english'::regconfig")


class ClearMemory:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def search(self, viewer: Viewer, query: ClearQuery) -> list[ClearHit]:
        """The best `query.limit` hits for `viewer`, best first, each with its context window."""
        check_query(query)
        phrases = search_terms(query.keywords)
        if not phrases:
            return []
        async with self.db.session() as session:
            ranked = (await session.execute(self.ranked(viewer, query, phrases))).all()
            if not ranked:
                return []
            windows = await self._windows(session, viewer, [row.id for row in ranked], query.context_window)
        return [
            ClearHit(
                message=windows[row.id][row.id],
                score=float(row.score),
                context=tuple(windows[row.id].values()) if query.context_window else (),
                duplicates=int(row.duplicates),
            )
            for row in ranked
        ]

    # ------------------------------------------------------------------ ranking
    def ranked(self, viewer: Viewer, query: ClearQuery, phrases: Sequence[Phrase]) -> Select[tuple[int, int, float]]:
        """Visible matches, fan-out copies grouped into one row (the lowest id stands for them), best first."""
        source, matches, score = self._full_text(phrases)
        hits = (
            select(M.id, M.sender_id, M.ts, M.text, score.label("score"))
            .select_from(source)
            .where(matches, *scope(viewer), *filters(viewer, query))
            .cte("hits")
            # SQLite may compute bm25() only while it walks the FTS table, not inside the grouping: keep it apart.
            .prefix_with("MATERIALIZED")
        )
        best = func.max(hits.c.score).label("score")
        return (
            select(func.min(hits.c.id).label("id"), (func.count() - 1).label("duplicates"), best)
            .group_by(hits.c.sender_id, hits.c.ts, hits.c.text)
            .order_by(best.desc(), hits.c.ts.desc(), func.min(hits.c.id))
            .limit(query.limit)
        )

    def _full_text(self, phrases: Sequence[Phrase]) -> tuple[FromClause, ColumnElement[bool], ColumnElement[float]]:
        """(rows to search, match condition, score where higher is better) for this database's engine."""
        if self.db.dialect == "postgresql":
            tsv = literal_column("message.text_tsv")
            tsquery = reduce(
                lambda a, b: a.op("||")(b), [func.phraseto_tsquery(ENGLISH, plain_text(p)) for p in phrases]
            )
            # Normalisation 1 divides by 1 + log(length): long messages do not win by sheer size.
            return M.__table__, tsv.op("@@")(tsquery), func.ts_rank_cd(tsv, tsquery, 1)
        fts_table = literal_column("message_fts")
        # The unary + keeps SQLite from probing the FTS index once per message row (a plan it likes, and a slow
        # one): the FTS index is walked once and each match looks its message up by primary key.
        source = table("message_fts").join(M, M.id == literal_column("+message_fts.rowid"))
        # bm25() is lower-is-better; negate it so every engine reports higher-is-better.
        return source, fts_table.op("MATCH")(fts5_expression(phrases)), -func.bm25(fts_table)

    # ------------------------------------------------------------------ hits and their context
    async def _windows(
        self, session: AsyncSession, viewer: Viewer, hit_ids: list[int], window: int
    ) -> dict[int, dict[int, MessageView]]:
        """For each hit id: its context window (the hit included) as {message id: view}, in channel order."""
        wanted = window_ids(viewer, hit_ids, window)
        rows = (await session.execute(view_select(wanted))).all()
        windows: dict[int, list[Row]] = defaultdict(list)
        for row in rows:
            windows[row.hit_id].append(row)
        return {
            hit_id: {row.id: message_view(row) for row in sorted(members, key=lambda r: (_utc(r.ts), r.id))}
            for hit_id, members in windows.items()
        }


# ---------------------------------------------------------------------- statement parts
def check_query(query: ClearQuery) -> None:
    if not 1 <= query.limit <= MAX_LIMIT:
        raise MemoryQueryError(f"limit must be between 1 and {MAX_LIMIT}, not {query.limit}.")
    if not 0 <= query.context_window <= MAX_CONTEXT_WINDOW:
        raise MemoryQueryError(
            f"context_window must be between 0 and {MAX_CONTEXT_WINDOW}, not {query.context_window}."
        )
    if isinstance(query.keywords, str):
        raise MemoryQueryError("keywords must be a list of keywords, not one string.")


def scope(viewer: Viewer, message: type[models.Message] = M) -> list[ColumnElement[bool]]:
    """The viewer's scope, as SQL conditions on a message row: their workspace, their visible channels."""
    return [message.workspace_id == viewer.workspace_id, message.channel_id.in_(visible_channels(viewer))]


def filters(viewer: Viewer, query: ClearQuery) -> list[ColumnElement[bool]]:
    """The optional sender, channel and time filters of a query."""
    conditions: list[ColumnElement[bool]] = []
    if query.sender:
        who = query.sender.strip().lstrip("@")
        senders = select(models.Member.id).where(
            models.Member.workspace_id == viewer.workspace_id,
            or_(models.Member.name == who, models.Member.platform_id == who),
        )
        conditions.append(M.sender_id.in_(senders))
    if query.channel:
        where = query.channel.strip().lstrip("#")
        channels = select(models.Channel.id).where(
            models.Channel.workspace_id == viewer.workspace_id,
            or_(models.Channel.name == where, models.Channel.platform_id == where),
        )
        conditions.append(M.channel_id.in_(channels))
    if query.since is not None:
        conditions.append(M.ts >= _utc(query.since))
    if query.until is not None:
        conditions.append(M.ts <= _utc(query.until))
    return conditions


def window_ids(viewer: Viewer, hit_ids: list[int], window: int) -> Select[tuple[int, int]]:
    """(hit id, message id) for every hit and up to `window` scoped neighbours on each side in its channel."""
    parts: list[Select[tuple[int, int]]] = [
        select(M.id.label("hit_id"), M.id.label("id")).where(M.id.in_(hit_ids), *scope(viewer))
    ]
    if window:
        for hit_id in hit_ids:
            parts += [
                _neighbours(viewer, hit_id, window, before=True),
                _neighbours(viewer, hit_id, window, before=False),
            ]
    return union_all(*parts) if len(parts) > 1 else parts[0]  # type: ignore[return-value]


def _neighbours(viewer: Viewer, hit_id: int, window: int, *, before: bool) -> Select[tuple[int, int]]:
    hit = aliased(M, name="hit")
    near = aliased(M, name="near")
    position, hit_position = tuple_(near.ts, near.id), tuple_(hit.ts, hit.id)
    order = (near.ts.desc(), near.id.desc()) if before else (near.ts, near.id)
    inner = (
        select(literal(hit_id).label("hit_id"), near.id.label("id"))
        .join(hit, hit.channel_id == near.channel_id)
        .where(hit.id == hit_id, position < hit_position if before else position > hit_position, *scope(viewer, near))
        .order_by(*order)
        .limit(window)
        .subquery()
    )
    return select(inner.c.hit_id, inner.c.id)


def view_select(wanted: Select[tuple[int, int]]) -> Select[tuple]:
    ids = wanted.subquery("wanted")
    return (
        select(
            ids.c.hit_id,
            M.id,
            M.platform_id,
            models.Channel.platform_id.label("channel_platform_id"),
            models.Channel.name.label("channel_name"),
            models.Member.name.label("sender_name"),
            M.ts,
            M.text,
        )
        .join(M, M.id == ids.c.id)
        .join(models.Channel, models.Channel.id == M.channel_id)
        .join(models.Member, models.Member.id == M.sender_id)
    )


def message_view(row: Row) -> MessageView:
    return MessageView(
        id=row.platform_id,
        channel_id=row.channel_platform_id,
        channel_name=row.channel_name,
        sender=row.sender_name,
        ts=_utc(row.ts),
        text=row.text,
    )


def _utc(moment: datetime) -> datetime:
    """Timestamps are stored in UTC; SQLite hands them back naive."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
