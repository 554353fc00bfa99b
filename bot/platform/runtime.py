"""What a chat platform adapter gives `askwith serve`, and what it gets: the types between the two.

They live in the core so an adapter depends on the core alone; `bot.serve.platforms` (the composition root) keeps the
registry of starters and starts them. A starter connects one platform (Slack, Discord) and returns a
`PlatformRuntime`: its ask service (run by the process's ask worker), its ingestion worker (run by the schedule), an
optional ASGI app the web server mounts (Slack's HTTP endpoint at /slack) and how to stop it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Protocol

from bot.asks.service import AskService, TranscriptLink
from bot.memory.access import MemoryAccess
from bot.memory.indexer import SessionIndexer
from bot.platform.port import ChatPort
from bot.settings import Settings
from bot.store.db import Database
from memory_ingest.worker import IngestWorker


class AskFactory(Protocol):
    """Builds one workspace's ask service over the process's database, model and memory: the composition root's
    `AskRoot.ask_service`, so an adapter never puts an `AskService` together itself. `memory`: another memory over
    the same reader (a Slack workspace's live memory)."""

    def __call__(self, port: ChatPort, workspace_id: int, *, memory: MemoryAccess | None = None) -> AskService: ...


class TranscriptLinkFactory(Protocol):
    """Signs transcript links for one workspace's answers (the web server's `TranscriptLinks`)."""

    def for_workspace(self, workspace_id: int) -> TranscriptLink: ...


@dataclass
class PlatformRuntime:
    name: str  # slack | discord
    asks: AskService | None  # None: an endpoint only (Slack's install flow before any workspace installed askwith)
    ingest: IngestWorker | None
    key: str = ""  # which workspace of the platform (a Discord server), when it serves several
    mount_path: str | None = None  # where `asgi` is mounted on the web server
    asgi: Any = None  # an ASGI application (Slack's HTTP endpoint)
    # Whether the workspace still has askwith (a Slack workspace that uninstalled it answers False): /healthz lists
    # only those that do.
    serving: Callable[[], bool] = lambda: True


@dataclass(frozen=True)
class PlatformContext:
    """What a starter gets from the process: shared parts, and the stack its shutdown goes on."""

    settings: Settings
    db: Database
    ask_service: AskFactory  # a workspace's asks, built by the composition root
    memory: MemoryAccess
    indexer: SessionIndexer | None  # fuzzy indexing for its ingestion worker (None = clear memory only)
    links: TranscriptLinkFactory  # its AskService gets `links.for_workspace(id)` for the final post
    stack: AsyncExitStack  # the starter registers its shutdown here as soon as there is something to stop
    listen: bool = True  # False in `askwith worker`: no endpoint, socket or gateway
    # A workspace that joins while the process runs (a Slack OAuth install) is announced here, to be served like those
    # present at start (its ingestion scheduled, its ask worker started, its transcripts viewable).
    joined: Callable[[PlatformRuntime], None] | None = None
    # A workspace that left (app uninstalled, tokens revoked, bot removed from a server), by (platform name, key):
    # its scheduled ingestion and ask worker stop at once; the platform deletes its data (`bot.asks.forget`).
    left: Callable[[str, str], None] | None = None


@dataclass(frozen=True)
class PlatformStarter:
    name: str
    enabled: Callable[[Settings], bool]  # e.g. its bot token is set
    start: Callable[[PlatformContext], Awaitable[PlatformRuntime | list[PlatformRuntime]]]  # a list: one per workspace
