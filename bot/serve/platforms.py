"""Platform adapters hosted by `askwith serve`: a registry of starters, each enabled by its own settings.

A starter connects one platform (Slack, Discord) and returns a `PlatformRuntime`: its ask service (run by the
process's ask worker), its ingestion worker (run by the schedule), an optional ASGI app the web server mounts (Slack's
HTTP endpoint at /slack) and how to stop it. A platform registers by adding a `PlatformStarter` to `STARTERS`; this
module imports no platform library itself (the starter's module does, lazily, inside `start`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass

from starlette.types import ASGIApp

from bot.agents.memory_tools import MemoryAccess
from bot.asks.service import AskService
from bot.errors import LLMNotConfiguredError
from bot.llm.client import LLMClient
from bot.settings import Settings
from bot.store.db import Database
from bot.web.links import TranscriptLinks
from memory_ingest.worker import IngestWorker


@dataclass
class PlatformRuntime:
    name: str  # slack | discord
    asks: AskService
    ingest: IngestWorker
    mount_path: str | None = None  # where `asgi` is mounted on the web server
    asgi: ASGIApp | None = None


@dataclass(frozen=True)
class PlatformStarter:
    name: str
    enabled: Callable[[Settings], bool]  # e.g. its bot token is set
    # Connects the platform, gives its AskService `links.for_workspace(id)` and registers its shutdown on the stack.
    start: Callable[
        [Settings, Database, LLMClient, MemoryAccess, TranscriptLinks, AsyncExitStack], Awaitable[PlatformRuntime]
    ]


STARTERS: dict[str, PlatformStarter] = {}


def register(starter: PlatformStarter) -> None:
    STARTERS[starter.name] = starter


def enabled_platforms(settings: Settings) -> list[PlatformStarter]:
    return [s for s in STARTERS.values() if s.enabled(settings)]


async def start_platforms(
    settings: Settings,
    db: Database,
    *,
    llm: LLMClient | None,
    memory: MemoryAccess,
    links: TranscriptLinks,
    stack: AsyncExitStack,
) -> list[PlatformRuntime]:
    """Start every platform whose token is set. A platform needs a language model to answer, so without one the
    missing-LLM error is raised here, at startup, as one clear line."""
    starters = enabled_platforms(settings)
    if not starters:
        return []
    if llm is None:
        raise LLMNotConfiguredError()
    return [await s.start(settings, db, llm, memory, links, stack) for s in starters]
