"""The composition root of asks: settings -> database -> LLM clients -> memory, built once, and the `AskService`s
of a process handed out from it. `askwith serve`, `askwith worker`, `askwith ask` and the benchmark all build here.

    async with open_root(settings) as root:                 # database, models (if configured), mirror memory
        asks = root.ask_service(port, workspace_id)         # one workspace's asks over the shared parts
    root = AskRoot.over(settings, db, LLMClients(llm, private), summarizer=llm)   # over parts the caller owns

Which model does what with the privacy split (L2): the private model is the only one that reads memory hits
(`MemoryAccess.reader`), and session summaries come from the model allowed to read memory (`summary_writer`): the
private one, else the main one; a stand-in (the scripted demo) gets extractive ones. `askwith ask` summarises as
`askwith ingest` does instead (`summaries="endpoint"`: the configured endpoint, a local model not started for it).
Shutdown runs in reverse: the LLM clients, memory's own summary client, the database.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Literal

from bot.asks.service import AskService, TranscriptLink
from bot.errors import LLMNotConfiguredError
from bot.llm.client import LLMClient
from bot.llm.provider import LLMClients, model_configured, open_llm_clients
from bot.llm.types import LLMBackend
from bot.memory.access import MemoryAccess
from bot.platform.port import ChatPort
from bot.settings import Settings
from bot.store.db import Database


if TYPE_CHECKING:
    from bot.memory.indexer import SessionIndexer

Summaries = Literal["reader", "endpoint"]


@dataclass
class Memory:
    """What asks read through, and the session indexer ingestion writes with (None: no fuzzy memory)."""

    access: MemoryAccess
    indexer: SessionIndexer | None


# (settings, database, the model writing session summaries or None for extractive ones) -> the process's memory
MemoryFactory = Callable[[Settings, Database, LLMClient | None], Memory]


def mirror_memory(settings: Settings, db: Database, summarizer: LLMClient | None, *, fuzzy: bool = True) -> Memory:
    """Mirror memory over one vector index per process, which the indexer of ingestion runs writes to.
    `fuzzy=False`: no fuzzy memory at all (switched off), so no sessions are indexed either."""
    from bot.memory.services import MemoryServices  # imports chromadb (~1 s): only processes that build memory pay

    services = MemoryServices.over(settings, db, summarizer)
    return Memory(services.access(fuzzy=fuzzy), services.indexer() if fuzzy else None)


def summary_writer(llms: LLMClients | None, *, stand_in: bool) -> LLMClient | None:
    """The model that writes session summaries: the configured one allowed to read memory (the private model with the
    privacy split, else the main one); None (extractive summaries) without a model or for a stand-in."""
    return None if stand_in or llms is None else llms.memory_reader


@dataclass
class AskRoot:
    """The parts every ask of a process shares. `llms` is None when no model is configured (a served process still
    starts, and says how to configure one)."""

    settings: Settings
    db: Database
    llms: LLMClients | None
    memory: Memory

    @classmethod
    def over(
        cls,
        settings: Settings,
        db: Database,
        llms: LLMClients | None,
        *,
        summarizer: LLMClient | None,
        memory: MemoryFactory | None = None,
        fuzzy: bool = True,
    ) -> AskRoot:
        """Memory built once over `db` (`memory` replaces mirror memory: tests, demos); the private model, when the
        privacy split has one, reads its hits. Nothing given here is closed by the root."""
        built = (memory or partial(mirror_memory, fuzzy=fuzzy))(settings, db, summarizer)
        if llms is not None and llms.private is not None:
            built.access = replace(built.access, reader=llms.private)
        return cls(settings, db, llms, built)

    @property
    def llm(self) -> LLMClient | None:
        return self.llms.main if self.llms is not None else None

    def ask_service(
        self,
        port: ChatPort,
        workspace_id: int,
        *,
        admins: Sequence[str] = (),
        memory: MemoryAccess | None = None,
        transcript_link: TranscriptLink | None = None,
    ) -> AskService:
        """The asks of one workspace. `admins`: that workspace's own admins, admins of its asks beside the configured
        ones (a local workspace's file names them); `memory`: another memory over the same reader (live memory)."""
        if self.llms is None:
            raise LLMNotConfiguredError()
        settings = self.settings
        if admins:
            settings = settings.replace(web_admins=",".join(filter(None, [settings.web_admins, *admins])))
        return AskService(
            settings=settings,
            db=self.db,
            port=port,
            llm=self.llms.main,
            memory=memory or self.memory.access,
            workspace_id=workspace_id,
            transcript_link=transcript_link,
        )


@asynccontextmanager
async def open_root(
    settings: Settings,
    *,
    llm: LLMClient | None = None,
    backend: LLMBackend | None = None,
    private_backend: LLMBackend | None = None,
    memory: MemoryFactory | None = None,
    needs_model: bool = False,
    summaries: Summaries = "reader",
) -> AsyncIterator[AskRoot]:
    """Open everything from settings, and close it when the block ends (LLM clients, summary client, database).

    The models open first, so a missing one is one line before any work (and local servers start); without one,
    `needs_model=False` builds a root with no models and `needs_model=True` raises LLMNotConfiguredError.
    `llm`: a stand-in playing the main model (scripted demo, tests), closed with the root; `backend` /
    `private_backend`: stand-ins for the configured models' endpoints (`bot.llm.provider.open_llm_clients`)."""
    async with AsyncExitStack() as models:
        llms = await _open_models(models, settings, llm, backend, private_backend, needs_model=needs_model)
        async with AsyncExitStack() as stack:
            db = await Database.open(settings)
            stack.push_async_callback(db.close)
            if summaries == "endpoint":
                summarizer = _endpoint_summary_model(settings)
                if summarizer is not None:
                    stack.push_async_callback(summarizer.aclose)
            else:
                summarizer = summary_writer(llms, stand_in=llm is not None)
            root = AskRoot.over(settings, db, llms, summarizer=summarizer, memory=memory)
            stack.push_async_exit(models.pop_all())  # opened first, closed first
            yield root


async def _open_models(
    stack: AsyncExitStack,
    settings: Settings,
    llm: LLMClient | None,
    backend: LLMBackend | None,
    private_backend: LLMBackend | None,
    *,
    needs_model: bool,
) -> LLMClients | None:
    if llm is not None:
        stack.push_async_callback(llm.aclose)
        return LLMClients(llm)
    if backend is None and not needs_model and not model_configured(settings):
        return None
    return await stack.enter_async_context(
        open_llm_clients(settings, backend=backend, private_backend=private_backend)
    )


def _endpoint_summary_model(settings: Settings) -> LLMClient | None:
    from bot.memory.services import summary_model  # imports chromadb (~1 s), as memory does anyway

    return summary_model(settings)
