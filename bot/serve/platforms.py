"""Platform adapters hosted by `askwith serve`: a registry of starters, each enabled by its own settings.

A starter (`bot.platform.runtime.PlatformStarter`, a core type, so adapters depend on the core alone) connects one
platform and returns a `PlatformRuntime`. The platforms askwith ships are registered by `_register_built_in`;
another registers by adding a `PlatformStarter` with `register`. This module imports no platform library itself
(the starter's module does, lazily, inside `start`).

`askwith worker` starts the same platforms with `listen=False`: their ports and ask services only (answers are
posted through the platform's API), no inbound endpoint, socket or gateway, so events reach `askwith serve` alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AsyncExitStack

from bot.errors import LLMNotConfiguredError, PlatformStartError
from bot.memory.access import MemoryAccess
from bot.memory.indexer import SessionIndexer
from bot.platform.runtime import AskFactory, PlatformContext, PlatformRuntime, PlatformStarter
from bot.settings import Settings
from bot.store.db import Database
from bot.web.links import TranscriptLinks


log = logging.getLogger(__name__)


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
    ask_service: AskFactory | None,
    memory: MemoryAccess,
    indexer: SessionIndexer | None = None,
    links: TranscriptLinks,
    stack: AsyncExitStack,
    listen: bool = True,
    joined: Callable[[PlatformRuntime], None] | None = None,
    left: Callable[[str, str], None] | None = None,
) -> list[PlatformRuntime]:
    """Start every platform whose token is set; `ask_service` builds each workspace's asks (None: no model is
    configured). A platform needs a language model to answer, so without one the missing-LLM error is raised here,
    at startup, as one clear line; so is any platform that fails to start."""
    starters = enabled_platforms(settings)
    if not starters:
        return []
    if ask_service is None:
        raise LLMNotConfiguredError()
    context = PlatformContext(settings, db, ask_service, memory, indexer, links, stack, listen, joined, left)
    return [runtime for starter in starters for runtime in await _start(starter, context)]


async def _start(starter: PlatformStarter, context: PlatformContext) -> list[PlatformRuntime]:
    try:
        started = await starter.start(context)
    except Exception as exc:  # one line naming the platform and why; the cause stays chained for the debug log
        raise PlatformStartError(starter.name, exc) from exc
    log.info("%s started%s", starter.name, "" if context.listen else " (asks only)")
    return started if isinstance(started, list) else [started]
