"""Mirror memory put together from settings, in one place: what every process that answers asks reads through.

    access = open_memory(settings, db, reader=private)                 # the vector index made here, from settings
    access = open_memory(settings, db, index=index, fuzzy=False)       # over an index the caller also indexes with

Clear memory is searched as `ASKWITH_AGENT_SEARCH` says (`agent_search`), fuzzy memory over the same vector index,
and whole-history reads over the store. A live workspace's memory is built by `bot.memory.live.live_access`, in the
same shape (database, then the private reader), over a platform's search instead of the copy.
"""

from __future__ import annotations

from bot.errors import InvalidSettingError
from bot.llm.client import LLMClient
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.history import WholeHistory
from bot.memory.hybrid import HybridMemory
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store.db import Database


AGENT_SEARCHES = ("hybrid", "lexical")


def open_memory(
    settings: Settings,
    db: Database,
    *,
    reader: LLMClient | None = None,
    index: VectorIndex | None = None,
    fuzzy: bool = True,
) -> MemoryAccess:
    """The mirror memory an ask reads through. `reader`: the privacy split's private model, the only one that reads
    memory hits (None: no split). `index`: the vector index to search, when the caller also indexes into it (one
    Chroma client per process); None makes it from settings. `fuzzy=False`: no fuzzy memory (switched off)."""
    if index is None:
        index = VectorIndex.from_settings(settings)
    return MemoryAccess(
        clear=agent_search(settings, db, index),
        fuzzy=FuzzyMemory(db, index) if fuzzy else None,
        reader=reader,
        history=WholeHistory(db),
    )


def agent_search(settings: Settings, db: Database, index: VectorIndex) -> ClearMemory | HybridMemory:
    """Clear memory as agents search it: `ASKWITH_AGENT_SEARCH` = hybrid (needs message windows:
    `ASKWITH_WINDOW_MESSAGES` > 0, else lexical) or lexical."""
    if settings.agent_search not in AGENT_SEARCHES:
        raise InvalidSettingError("ASKWITH_AGENT_SEARCH", settings.agent_search, f"one of {', '.join(AGENT_SEARCHES)}")
    if settings.agent_search == "lexical" or settings.window_messages <= 0:
        return ClearMemory(db)
    return HybridMemory(ClearMemory(db), index.windows())
