"""Clear memory: ranked full-text search over the messages one viewer can see.

    memory = ClearMemory(db)
    hits = await memory.search(viewer, ClearQuery(keywords=("central perk", "coffee"), context_window=2))

Keywords are OR-ed; a message holding more of them ranks first (`coordination` in `bot.store.message_search_sql`),
the engine's own rank ordering those that hold as many: SQLite FTS5 `bm25()` over `message_fts`, PostgreSQL
`ts_rank_cd()` over the generated `message.text_tsv`. A keyword of several words is a phrase and must match whole.
Memory hands the store a `SearchShape` and the viewer's ids; the store's statements scope every row they read to
the viewer's visible channels, for hits and their context alike, so nothing outside the viewer's channels, or inside a
channel their policy excludes, is ever read. Fan-out copies of one line (same sender, text and time, e.g. one
utterance stored in several DMs) collapse into one hit, counted in `ClearHit.duplicates`.

Blank keywords are a malformed query and raise `MemoryQueryError`; keywords that are all stop words return [].
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy import Row

from bot.errors import MemoryQueryError
from bot.memory.keywords import Phrase, coordination_stems, fts5_expression, search_terms, tsquery_expression
from bot.memory.sight import shared
from bot.memory.types import ClearHit, ClearQuery, MessageView, Viewer
from bot.store.db import Database
from bot.store.message_search_reads import MessageSearchReads, SearchShape, message_search_reads


MAX_LIMIT = 100
MAX_CONTEXT_WINDOW = 20
# SQLite can intersect the keywords with the viewer's channels inside the FTS index (migration 0004_scoped_fts).
# That costs about as much per channel token as looking up ~25 matching messages one by one, so it pays off only
# when the keywords match more than SCOPED_MATCH_MATCHES_PER_CHANNEL messages per visible channel across the
# workspace, and only up to SCOPED_MATCH_MAX_CHANNELS channels.
SCOPED_MATCH_MAX_CHANNELS = 128
SCOPED_MATCH_MATCHES_PER_CHANNEL = 25


class ClearMemory:
    def __init__(
        self,
        db: Database,
        *,
        scoped_match_max_channels: int = SCOPED_MATCH_MAX_CHANNELS,  # 0: never intersect inside the FTS index
        scoped_match_matches_per_channel: int = SCOPED_MATCH_MATCHES_PER_CHANNEL,  # 0: always (up to the max)
    ) -> None:
        self.db = db
        self.scoped_match_max_channels = scoped_match_max_channels
        self.scoped_match_matches_per_channel = scoped_match_matches_per_channel

    async def search(
        self, viewer: Viewer, query: ClearQuery, *, visible: Mapping[int, int] | None = None
    ) -> list[ClearHit]:
        """The best `query.limit` hits for `viewer`, best first, each with its context window. `visible`: the
        viewer's channels (`visible_channel_versions`) when the caller has just read them; the statement scopes
        every row itself either way, they only spare SQLite the statement that lists them again."""
        rows = await self._run(viewer, query, ranked_only=False, visible=visible)
        return assemble(rows, with_context=query.context_window > 0)

    async def ranked(
        self, viewer: Viewer, query: ClearQuery, *, visible: Mapping[int, int] | None = None
    ) -> list[tuple[int, float]]:
        """Only the ranking: (message database id, score), best first, at most `query.limit` (no views)."""
        rows = await self._run(viewer, query, ranked_only=True, visible=visible)
        return [(row.id, float(row.score)) for row in rows]

    async def _run(
        self, viewer: Viewer, query: ClearQuery, *, ranked_only: bool, visible: Mapping[int, int] | None
    ) -> Sequence[Row]:
        check_query(query)
        phrases = search_terms(query.keywords)
        if not phrases:
            return []
        stems = coordination_stems(phrases)
        shape = SearchShape(
            dialect=self.db.dialect,
            context=query.context_window > 0 and not ranked_only,
            sender=bool(query.sender),
            channel=bool(query.channel),
            since=query.since is not None,
            until=query.until is not None,
            terms=len(stems),
        )
        params = {
            **viewer_params(viewer),
            **filter_params(query),
            **{f"term{i}": term for i, term in enumerate(stems)},
            "limit": query.limit,
            "window": query.context_window,
        }
        # Searches of one turn that run this very statement (same viewer, words and filters) read its rows once.
        bound = {k: v for k, v in params.items() if not (ranked_only and k == "window")}  # a ranking has no context
        key = ("clear", ranked_only, shape, tuple(sorted(bound.items())))
        return await shared(visible, key, partial(self._execute, viewer, phrases, shape, params, ranked_only, visible))

    async def _execute(
        self,
        viewer: Viewer,
        phrases: Sequence[Phrase],
        shape: SearchShape,
        params: dict[str, Any],
        ranked_only: bool,
        visible: Mapping[int, int] | None,
    ) -> Sequence[Row]:
        async with message_search_reads(self.db) as reads:
            if self.db.dialect == "postgresql":
                match = tsquery_expression(phrases)
            elif (match := await self._fts5_match(reads, viewer, phrases, visible)) is None:
                return []  # the viewer sees no channel at all
            read = reads.ranked if ranked_only else reads.search
            return await read(shape, {**params, "match": match})

    async def _fts5_match(
        self,
        reads: MessageSearchReads,
        viewer: Viewer,
        phrases: Sequence[Phrase],
        visible: Mapping[int, int] | None,
    ) -> str | None:
        """The MATCH expression for SQLite: scoped to the viewer's channel tokens when that pays off (see
        SCOPED_MATCH_*); None when the viewer sees no channel. The tokens only speed the match up; the scope is the
        statement's own condition."""
        cap = self.scoped_match_matches_per_channel * self.scoped_match_max_channels
        params = {**viewer_params(viewer), "match": fts5_expression(phrases), "cap": cap}
        if visible is not None:
            channels = sorted(visible)
            if not channels or len(channels) > self.scoped_match_max_channels:
                return fts5_expression(phrases) if channels else None
            matches = await reads.match_count(params)
        else:
            rows = await reads.scope_probe(params)
            if not rows:
                return None
            channels, matches = [row[0] for row in rows], rows[0][1]
        scoped = len(channels) <= self.scoped_match_max_channels and (
            matches >= self.scoped_match_matches_per_channel * len(channels)
        )
        return fts5_expression(phrases, channels if scoped else ())


def assemble(rows: Sequence[Row], *, with_context: bool) -> list[ClearHit]:
    """Hits, best first, from the rows of a search (`MessageSearchReads.search`): each hit's own row carries its
    score."""
    windows: dict[int, list[Row]] = defaultdict(list)
    for row in rows:
        windows[row.hit_id].append(row)
    ranked = sorted(
        (row for row in rows if row.id == row.hit_id), key=lambda r: (-r.score, -utc(r.ts).timestamp(), r.id)
    )
    hits = []
    for own in ranked:
        context = sorted(windows[own.id], key=lambda r: (utc(r.ts), r.id)) if with_context else []
        hits.append(
            ClearHit(
                message=message_view(own),
                score=float(own.score),
                context=tuple(message_view(row) for row in context),
                duplicates=int(own.duplicates),
            )
        )
    return hits


# ---------------------------------------------------------------------- parameters and rows
def check_query(query: ClearQuery) -> None:
    if isinstance(query.keywords, str):
        raise MemoryQueryError("keywords must be a list of keywords, not one string.")
    if not 1 <= query.limit <= MAX_LIMIT:
        raise MemoryQueryError(f"limit must be between 1 and {MAX_LIMIT}, not {query.limit}.")
    if not 0 <= query.context_window <= MAX_CONTEXT_WINDOW:
        raise MemoryQueryError(
            f"context_window must be between 0 and {MAX_CONTEXT_WINDOW}, not {query.context_window}."
        )


def viewer_params(viewer: Viewer) -> dict[str, int]:
    return {"workspace_id": viewer.workspace_id, "viewer_id": viewer.member_id}


def filter_params(query: ClearQuery) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if query.sender:
        params["sender"] = query.sender.strip().lstrip("@")
    if query.channel:
        params["channel"] = query.channel.strip().lstrip("#")
    if query.since is not None:
        params["since"] = utc(query.since)
    if query.until is not None:
        params["until"] = utc(query.until)
    return params


def message_view(row: Row) -> MessageView:
    return MessageView(
        id=row.platform_id,
        channel_id=row.channel_platform_id,
        channel_name=row.channel_name,
        sender=row.sender_name,
        ts=utc(row.ts),
        text=row.text,
    )


def utc(moment: datetime) -> datetime:
    """Timestamps are stored in UTC; SQLite hands them back naive, and a naive filter value is taken as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
