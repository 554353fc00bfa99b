"""Fuzzy-memory indexing: sessionize stored messages, summarize each session once, embed the summaries and the
sessions' message windows (the dense side of hybrid retrieval).

    indexer = SessionIndexer(db, settings, SessionSummarizer(db, llm), VectorIndex.from_settings(settings))
    stats = await indexer.update(workspace_id, progress=lambda done, total: ...)

Three stages, each recorded in the database as it goes, so a kill part-way loses and duplicates nothing:
1. sessions: the channels whose messages changed are cut into sessions again; sessions that no longer exist (e.g. one
   extended by new messages) are dropped with their vectors, new ones are stored;
2. summaries: sessions without a summary get one (cached by content hash: identical content is summarized once);
3. embeddings: summaries not yet in the vector index are embedded and upserted in batches, with the windows of
   their sessions (`window_messages` consecutive messages embedded together, in a sibling index), each batch marked
   `embedded` once it is in the index (a batch cut off by a kill is simply upserted again). Windows belong to their
   session: when a session goes (new, edited or deleted messages), its windows go with it.
A rerun with no new messages adds 0 sessions, 0 summaries and 0 embeddings.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from chromadb.api.types import Embeddings

from bot.memory.sessions import SessionLine, sessionize, windows
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorDoc, VectorIndex
from bot.memory.vector_keys import window_key
from bot.settings import Settings
from bot.store import session_index as store
from bot.store.db import Database


@dataclass(frozen=True)
class _EmbedBatch:
    summaries: list[VectorDoc]
    windows: list[VectorDoc]
    window_counts: dict[int, int]  # session id (in id order) -> its windows among `windows`

    @property
    def ids(self) -> list[int]:
        return list(self.window_counts)

    @property
    def texts(self) -> list[str]:
        return [doc.text for doc in self.summaries + self.windows]


@dataclass
class IndexStats:
    sessions_new: int = 0
    sessions_removed: int = 0
    summaries_new: int = 0
    embeddings_new: int = 0


Progress = Callable[[int, int], None]  # (done, total)

CHANNELS_PER_PASS = 100  # channels re-sessionized per transaction
SUMMARY_BATCH = 32  # sessions summarized per transaction (their LLM calls run concurrently)
EMBED_BATCH = 128  # summaries embedded and upserted per batch


class SessionIndexer:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        summarizer: SessionSummarizer,
        index: VectorIndex,
        *,
        summary_batch: int = SUMMARY_BATCH,
        embed_batch: int = EMBED_BATCH,
    ) -> None:
        self.db = db
        self.gap = timedelta(minutes=settings.session_gap_minutes)
        self.max_messages = settings.session_max_messages
        self.summarizer = summarizer
        self.index = index
        self.summary_batch = summary_batch
        self.embed_batch = embed_batch
        self.window_messages = settings.window_messages

    async def update(self, workspace_id: int, *, progress: Progress | None = None) -> IndexStats:
        """Bring a workspace's sessions, summaries and embeddings up to date with its stored messages.

        Idempotent: with no new messages it adds nothing. Resumable: a kill part-way loses and duplicates nothing.
        """
        stats = IndexStats()
        await self._resessionize(workspace_id, stats)
        tracker = _Tracker(progress, await self._pending_work(workspace_id))
        await self._summarize(workspace_id, stats, tracker)
        await self._embed(workspace_id, stats, tracker)
        return stats

    # ------------------------------------------------------------------ stage 1: sessions
    async def _resessionize(self, workspace_id: int, stats: IndexStats) -> None:
        changed = await store.changed_channels(self.db, workspace_id)
        for start in range(0, len(changed), CHANNELS_PER_PASS):
            await self._resessionize_channels(workspace_id, changed[start : start + CHANNELS_PER_PASS], stats)

    async def _resessionize_channels(self, workspace_id: int, channel_ids: list[int], stats: IndexStats) -> None:
        lines, stored = await store.channel_sessions(self.db, channel_ids)
        spans = [
            span
            for channel_id in channel_ids
            for span in sessionize(channel_id, lines.get(channel_id, []), gap=self.gap, max_messages=self.max_messages)
        ]
        wanted = {span.key for span in spans}
        gone = [s for key, s in stored.items() if key not in wanted]
        new = [span for span in spans if span.key not in stored]
        # Vectors go first: a kill before the rows are deleted leaves the channel marked changed, and the rerun
        # deletes again. Deleting the rows first could leave vectors no row points to.
        await self.drop_vectors(workspace_id, [s.key for s in gone if s.embedded])
        stats.sessions_new += await store.replace_sessions(self.db, workspace_id, gone=[s.id for s in gone], new=new)
        stats.sessions_removed += len(gone)

    async def drop_vectors(self, workspace_id: int, session_keys: list[str]) -> None:
        """Remove the vectors of sessions whose rows are gone: their summaries and their message windows."""
        await self.index.delete(workspace_id, session_keys)
        if self.window_messages:
            await self.index.windows().delete_sessions(workspace_id, session_keys)

    async def _pending_work(self, workspace_id: int) -> int:
        return await store.pending_work(self.db, workspace_id)

    # ------------------------------------------------------------------ stage 2: summaries
    async def _summarize(self, workspace_id: int, stats: IndexStats, tracker: _Tracker) -> None:
        after = 0
        while batch := await self._next_unsummarized(workspace_id, after):
            after = batch[-1][0]
            representative = {content_hash: id_ for id_, content_hash in reversed(batch)}
            lines = await store.session_lines(self.db, list(representative.values()))
            stats.summaries_new += await self.summarizer.ensure(
                {content_hash: lines[id_] for content_hash, id_ in representative.items()}
            )
            await store.mark_summarized(self.db, [id_ for id_, _ in batch])
            tracker.advance(len(batch))

    async def _next_unsummarized(self, workspace_id: int, after: int) -> list[tuple[int, str]]:
        """The next sessions (by id) that still need a summary: (id, content hash)."""
        return await store.next_unsummarized(self.db, workspace_id, after=after, limit=self.summary_batch)

    # ------------------------------------------------------------------ stage 3: embeddings
    async def _embed(self, workspace_id: int, stats: IndexStats, tracker: _Tracker) -> None:
        batch = await self._next_unembedded(workspace_id, 0)
        vectors = self._embedding(batch)
        try:
            while batch.ids:
                upcoming = await self._next_unembedded(workspace_id, batch.ids[-1])
                ready = await vectors
                # The model works on the next batch while this one is written to the index and the database.
                vectors = self._embedding(upcoming)
                count = len(batch.summaries)
                await self.index.upsert(workspace_id, batch.summaries, vectors=ready[:count])
                await self.index.windows().upsert(workspace_id, batch.windows, vectors=ready[count:])
                await store.mark_embedded(self.db, batch.window_counts)
                stats.embeddings_new += count
                tracker.advance(count)
                batch = upcoming
        finally:
            vectors.cancel()  # only pending when a failure cut the loop short
            await asyncio.gather(vectors, return_exceptions=True)

    def _embedding(self, batch: _EmbedBatch) -> asyncio.Task[Embeddings]:
        return asyncio.create_task(self.index.embed(batch.texts))

    async def _next_unembedded(self, workspace_id: int, after: int) -> _EmbedBatch:
        """The next summarized sessions (by id) not yet in the vector index: their summaries and windows."""
        rows, lines = await store.next_unembedded(
            self.db, workspace_id, after=after, limit=self.embed_batch, with_lines=bool(self.window_messages)
        )
        summaries = [VectorDoc(key, text, channel_id) for _, key, channel_id, text in rows]
        cut = {id_: windows(lines.get(id_, []), self.window_messages) for id_, *_ in rows}
        docs = [
            window_doc(key, channel_id, index, window)
            for id_, key, channel_id, _ in rows
            for index, window in enumerate(cut[id_])
        ]
        return _EmbedBatch(summaries, docs, {id_: len(cut[id_]) for id_ in cut})


def window_doc(session_key: str, channel_id: int, index: int, lines: tuple[SessionLine, ...]) -> VectorDoc:
    """One window of a session as a vector document: its lines as a transcript, its message ids alongside."""
    return VectorDoc(
        key=window_key(session_key, index),
        text="\n".join(line.transcript() for line in lines),
        channel_id=channel_id,
        session_key=session_key,
        message_ids=",".join(str(line.message_id) for line in lines),
    )


class _Tracker:
    """Reports (done, total) after every batch, if anyone asked."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress = progress
        self.total = total
        self.done = 0
        if progress is not None:
            progress(0, total)

    def advance(self, count: int) -> None:
        self.done += count
        if self.progress is not None:
            self.progress(self.done, self.total)
