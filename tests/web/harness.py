"""Building the served app for tests: the bundled sample workspace, the scripted model, real clear memory."""

from __future__ import annotations

from starlette.applications import Starlette

from bot.agents.memory_tools import MemoryAccess
from bot.agents.scripted_model import scripted_model
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.memory.clear import ClearMemory
from bot.serve.process import serve_app
from bot.serve.runtime import Memory
from bot.settings import Settings
from bot.store.db import Database


SECRET = "test-link-secret"
# In the sample workspace the rehearsal room is in Alice's DM with Carol; Bob's dentist slot in his DM with Alice.
QUESTION = "Which room is booked for the rehearsal?"


def clear_only(settings: Settings, db: Database, llm: LLMClient | None) -> Memory:
    return Memory(MemoryAccess(clear=ClearMemory(db), fuzzy=None), indexer=None)


def scripted_llm(settings: Settings) -> LLMClient:
    return LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))


def web_settings(settings: Settings, **changes: object) -> Settings:
    """Fast settings for a served test app: quick worker polling is the worker's default; no scheduled ingestion."""
    return settings.replace(ingest_interval_seconds=0, worker_heartbeat_seconds=0.5, **changes)


def app_for(settings: Settings, *, llm: bool = True, workspace: str = "acme") -> Starlette:
    return serve_app(
        settings,
        llm=scripted_llm(settings) if llm else None,
        memory=clear_only,
        workspace=workspace,
        secret=SECRET,
    )
