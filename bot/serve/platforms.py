"""Platform adapters hosted by `askwith serve`: a registry of starters, each enabled by its own settings.

A starter connects one platform (Slack, Discord) and returns a `PlatformRuntime`: its ask service (run by the
process's ask worker), its ingestion worker (run by the schedule), an optional ASGI app the web server mounts (Slack's
HTTP endpoint at /slack) and how to stop it. The platforms askwith ships are registered by `_register_built_in`;
another registers by adding a `PlatformStarter` with `register`. This module imports no platform library itself
(the starter's module does, lazily, inside `start`).

`askwith worker` starts the same platforms with `listen=False`: their ports and ask services only (answers are
posted through the platform's API), no inbound endpoint, socket or gateway, so events reach `askwith serve` alone.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass

from starlette.types import ASGIApp

from bot.agents.memory_tools import MemoryAccess
from bot.asks.service import AskService
from bot.errors import LLMNotConfiguredError, PlatformStartError
from bot.llm.client import LLMClient
from bot.memory.indexer import SessionIndexer
from bot.settings import Settings
from bot.store.db import Database
from bot.web.links import TranscriptLinks
from memory_ingest.worker import IngestWorker


log = logging.getLogger(__name__)


@dataclass
class PlatformRuntime:
    name: str  # slack | discord
    asks: AskService
    ingest: IngestWorker
    mount_path: str | None = None  # where `asgi` is mounted on the web server
    asgi: ASGIApp | None = None


@dataclass(frozen=True)
class PlatformContext:
    """What a starter gets from the process: shared parts, and the stack its shutdown goes on."""

    settings: Settings
    db: Database
    llm: LLMClient
    memory: MemoryAccess
    indexer: SessionIndexer | None  # fuzzy indexing for its ingestion worker (None = clear memory only)
    links: TranscriptLinks  # its AskService gets `links.for_workspace(id)` for the final post
    stack: AsyncExitStack  # the starter registers its shutdown here as soon as there is something to stop
    listen: bool = True  # False in `askwith worker`: no endpoint, socket or gateway


@dataclass(frozen=True)
class PlatformStarter:
    name: str
    enabled: Callable[[Settings], bool]  # e.g. its bot token is set
    start: Callable[[PlatformContext], Awaitable[PlatformRuntime]]


STARTERS: dict[str, PlatformStarter] = {}


def register(starter: PlatformStarter) -> None:
    STARTERS[starter.name] = starter


def _register_built_in() -> None:
    # Imported here: the adapters' starter modules import this one.
    from adapters.discord.serve import DISCORD
    from adapters.slack.serve import SLACK

    for starter in (SLACK, DISCORD):
        STARTERS.setdefault(starter.name, starter)


def enabled_platforms(settings: Settings) -> list[PlatformStarter]:
    _register_built_in()
    return [s for s in STARTERS.values() if s.enabled(settings)]


async def start_platforms(
    settings: Settings,
    db: Database,
    *,
    llm: LLMClient | None,
    memory: MemoryAccess,
    indexer: SessionIndexer | None = None,
    links: TranscriptLinks,
    stack: AsyncExitStack,
    listen: bool = True,
) -> list[PlatformRuntime]:
    """Start every platform whose token is set. A platform needs a language model to answer, so without one the
    missing-LLM error is raised here, at startup, as one clear line; so is any platform that fails to start."""
    starters = enabled_platforms(settings)
    if not starters:
        return []
    if llm is None:
        raise LLMNotConfiguredError()
    context = PlatformContext(settings, db, llm, memory, indexer, links, stack, listen)
    return [await _start(starter, context) for starter in starters]


async def _start(starter: PlatformStarter, context: PlatformContext) -> PlatformRuntime:
    try:
        runtime = await starter.start(context)
    except Exception as exc:  # one line naming the platform and why; the cause stays chained for the debug log
        raise PlatformStartError(starter.name, exc) from exc
    log.info("%s started%s", starter.name, "" if context.listen else " (asks only)")
    return runtime
