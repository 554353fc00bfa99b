"""What an ask reads memory through: the stores it may search, as one value handed to the agents.

    access = open_memory(settings, db, reader=private)        # mirror memory (`bot.memory.wiring`)
    access = live_access(db, search, reader=private)          # live memory (`bot.memory.live`)
    hits = await access.clear.search(viewer, ClearQuery(("launch",)))

The protocols name what the agents' memory tools call, whichever source serves them; the stores here and the live
searches in `bot.memory.live` implement them, so memory never needs to know the agents that read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from bot.llm.client import LLMClient
from bot.memory.history import HistorySize
from bot.memory.source import LiveSearch
from bot.memory.types import ClearHit, ClearQuery, FuzzyHit, FuzzyQuery, MessageView, Viewer


Visible = Mapping[int, int]  # the channels a viewer can see, with their memory versions (one snapshot a turn)


class ClearSearch(Protocol):
    async def search(self, viewer: Viewer, query: ClearQuery, *, visible: Visible | None = None) -> list[ClearHit]: ...


class FuzzySearch(Protocol):
    async def search(self, viewer: Viewer, query: FuzzyQuery, *, visible: Visible | None = None) -> list[FuzzyHit]: ...


class HistoryRead(Protocol):
    """`bot.memory.history.WholeHistory`: everything a viewer can see, without searching."""

    async def size(
        self, viewer: Viewer, *, channel: str | None = None, sender: str | None = None, limit: int | None = None
    ) -> HistorySize: ...

    async def read(
        self, viewer: Viewer, *, channel: str | None = None, sender: str | None = None
    ) -> list[MessageView]: ...

    async def visible_ids(self, viewer: Viewer, message_ids: list[str]) -> set[str]: ...

    async def channels(self, viewer: Viewer) -> dict[int, int]: ...


@dataclass(frozen=True)
class MemoryAccess:
    """The memory stores an ask reads through; None = that store is not available in this deployment.

    `reader` is the private model of the privacy split (L2): the only model that reads what these stores return
    (it extracts facts for the main model). None = no split: the main model reads the hits itself."""

    clear: ClearSearch | None
    fuzzy: FuzzySearch | None
    reader: LLMClient | None = None
    history: HistoryRead | None = None  # None: whole-history reads are not available
    # The memory source: None = `mirror` (the stores above hold a copy); else `live`, searched on the platform on
    # behalf of each member (`bot.memory.live`), which also says who can be searched before an ask starts.
    live: LiveSearch | None = None
