"""The memory services of one process, built once from settings and closed together.

    services = await MemoryServices.open(settings)
    report = await IngestWorker(port, services.db, indexer=services.indexer()).run()
    hits = await services.clear().search(viewer, ClearQuery(keywords=("paris",)))
    hits = await services.fuzzy().search(viewer, FuzzyQuery("who is moving out?"))
    memory = services.access(reader=private)        # what an ask reads through (`bot.memory.wiring`)
    await services.close()

The database, the vector index (embedded Chroma, or a server by setting) and, when an endpoint is configured, the
LLM client that writes session summaries (without one, extractive summaries stand in, labelled as such). With the
privacy split that is the private model's endpoint, never the main one.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.llm.client import LLMClient
from bot.llm.provider import private_settings
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.history import WholeHistory
from bot.memory.hybrid import HybridMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorIndex
from bot.memory.wiring import agent_search, open_memory
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
        return cls.over(settings, await Database.open(settings), summary_model(settings))

    @classmethod
    def over(cls, settings: Settings, db: Database, llm: LLMClient | None) -> MemoryServices:
        """The services over an open database, the vector index made once here from settings; `llm` writes session
        summaries (None: extractive ones)."""
        return cls(settings=settings, db=db, index=VectorIndex.from_settings(settings), llm=llm)

    def access(self, *, reader: LLMClient | None = None, fuzzy: bool = True) -> MemoryAccess:
        """The memory an ask reads through, over this process's vector index (`bot.memory.wiring.open_memory`)."""
        return open_memory(self.settings, self.db, reader=reader, index=self.index, fuzzy=fuzzy)

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


def summary_model(settings: Settings) -> LLMClient | None:
    """The endpoint allowed to read sessions, or None (extractive summaries). A local model is not started here."""
    chosen = private_settings(settings) if settings.privacy_split else settings
    return LLMClient.from_settings(chosen) if chosen.llm_configured else None
