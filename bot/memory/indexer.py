"""Fuzzy-memory indexing: sessionize stored messages, summarize each session once, embed the summaries.

INTERFACE ONLY in the foundation skeleton; the implementation lands with fuzzy memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class IndexStats:
    sessions_new: int = 0
    sessions_removed: int = 0
    summaries_new: int = 0
    embeddings_new: int = 0


Progress = Callable[[int, int], None]  # (done, total)


class SessionIndexer:
    async def update(self, workspace_id: int, *, progress: Progress | None = None) -> IndexStats:
        """Bring a workspace's sessions, summaries and embeddings up to date with its stored messages.

        Idempotent: with no new messages it adds nothing. Resumable: a kill part-way loses and duplicates nothing.
        """
        raise NotImplementedError()
