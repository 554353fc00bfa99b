"""The memory source protocol: what a platform implements to serve a workspace's memory live (see `bot.memory.live`).

A workspace's memory source is `mirror` (history copied into askwith's stores) or `live` (searched on the platform,
query by query, on behalf of the member). This module names the live side's contract and nothing else, so the
agents' memory tools can refer to it without importing the stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.memory.types import MessageView


MEMORY_SOURCES = ("mirror", "live")


@dataclass(frozen=True)
class LiveQuery:
    text: str  # keywords (lexical) or the question in words (semantic)
    semantic: bool
    limit: int
    since: datetime | None = None
    until: datetime | None = None
    context: int = 0  # neighbouring messages wanted around each result (0: none)


@dataclass(frozen=True)
class LiveResult:
    message: MessageView
    context: tuple[MessageView, ...] = ()  # neighbours in channel order, the result included when non-empty


class LiveSearch(Protocol):
    """A platform's search on behalf of one member (whose view the platform enforces)."""

    async def search(self, member_platform_id: str, query: LiveQuery) -> list[LiveResult]: ...

    async def can_search(self, member_platform_id: str) -> bool:
        """Whether a search on this member's behalf can run now (a connected token, or a fresh grant)."""
        ...
