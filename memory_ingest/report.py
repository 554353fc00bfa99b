"""What an ingestion run reports, and how it reports progress while it runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from bot.memory.indexer import IndexStats
from bot.store.ingest_status import ObjectState


class Stage(StrEnum):
    HISTORY = "history"  # pulling channel history through the port (done/total = channels)
    INDEX = "index"  # sessionizing, summarizing, embedding (done/total as the indexer counts them)


# (stage, done, total): called as work advances, so a CLI can draw a progress bar.
IngestProgress = Callable[[Stage, int, int], None]


@dataclass
class IngestReport:
    workspace_id: int
    workspace_name: str
    members: int = 0  # human members (bots not counted)
    members_opted_in: int = 0
    channels: int = 0  # channels with at least one human member
    channels_ingested: int = 0  # those read because an opted-in member reads them
    messages_added: int = 0
    messages_total: int = 0
    messages_skipped: int = 0  # posts by bots, or by senders the platform no longer lists
    index: IndexStats | None = None  # None when no session indexer is configured
    seconds: float = 0.0
    problems: list[ObjectState] = field(default_factory=list)  # channels, threads, tokens not `ok` after the run

    @property
    def sessions_added(self) -> int | None:
        return None if self.index is None else self.index.sessions_new

    @property
    def summaries_added(self) -> int | None:
        return None if self.index is None else self.index.summaries_new

    @property
    def embeddings_added(self) -> int | None:
        return None if self.index is None else self.index.embeddings_new
