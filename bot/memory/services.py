"""The memory services of one process, built once from settings and closed together.

    services = await MemoryServices.open(settings)
    report = await IngestWorker(port, services.db, indexer=services.indexer()).run()
    hits = await services.clear().search(viewer, ClearQuery(keywords=("paris",)))
    hits = await services.fuzzy().search(viewer, FuzzyQuery("who is moving out?"))
    await services.close()

The database, the vector index (embedded Chroma, or a server by setting) and, when an endpoint is configured, the
LLM client that writes session summaries (without one, extractive summaries stand in, labelled as such). With the
privacy split that is the private model's endpoint, never the main one.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.errors import InvalidSettingError
from bot.llm.client import LLMClient
from bot.llm.provider import private_settings
from bot.memory.clear import ClearMemory
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.history import WholeHistory
from bot.memory.hybrid import HybridMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store.db import Database


@dataclass
class MemoryServices:
    settings: Settings
    db: Database
    index: VectorIndex
    llm: LLMClient | None  # None: no endpoint configured

    @classmethod
    async def open(cls, settings: Settings) -> MemoryServices:
        db = await Database.open(settings)
        return cls(settings=settings, db=db, index=VectorIndex.from_settings(settings), llm=_summary_model(settings))

    def indexer(self) -> SessionIndexer:
        return SessionIndexer(self.db, self.settings, SessionSummarizer(self.db, self.llm), self.index)

    def clear(self) -> ClearMemory:
        return ClearMemory(self.db)

    def hybrid(self) -> HybridMemory:
        """Clear memory fused with dense search over message windows (see `bot.memory.hybrid`)."""
        return HybridMemory(self.clear(), self.index.windows())

    def agent_search(self) -> ClearMemory | HybridMemory:
        """What agents search clear memory with (`ASKWITH_AGENT_SEARCH`): hybrid by default, or lexical only."""
        return agent_search(self.settings, self.db, self.index)

    def fuzzy(self) -> FuzzyMemory:
        return FuzzyMemory(self.db, self.index)

    def history(self) -> WholeHistory:
        return WholeHistory(self.db)

    async def close(self) -> None:
        if self.llm is not None:
            await self.llm.aclose()
        await self.db.close()


def _summary_model(settings: Settings) -> LLMClient | None:
    """The endpoint allowed to read sessions, or None (extractive summaries). A local model is not started here."""
    chosen = private_settings(settings) if settings.privacy_split else settings
    return LLMClient.from_settings(chosen) if chosen.llm_configured else None


AGENT_SEARCHES = ("hybrid", "lexical")


def agent_search(settings: Settings, db: Database, index: VectorIndex) -> ClearMemory | HybridMemory:
    """Clear memory as agents search it: `ASKWITH_AGENT_SEARCH` = hybrid (needs message windows:
    `ASKWITH_WINDOW_MESSAGES` > 0, else lexical) or lexical."""
    if settings.agent_search not in AGENT_SEARCHES:
        raise InvalidSettingError("ASKWITH_AGENT_SEARCH", settings.agent_search, f"one of {', '.join(AGENT_SEARCHES)}")
    if settings.agent_search == "lexical" or settings.window_messages <= 0:
        return ClearMemory(db)
    return HybridMemory(ClearMemory(db), index.windows())
