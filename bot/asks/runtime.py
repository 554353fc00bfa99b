"""Building what an `AskService` needs from settings: the LLM client and the two memory stores.

llm = build_llm(settings)                 # LLMNotConfiguredError when no endpoint is set
llm = build_llm(settings, scripted=True)  # the offline scripted stand-in (demos only: not answer quality)
memory = open_memory(settings, db)
"""

from __future__ import annotations

from bot.agents.memory_tools import MemoryAccess
from bot.agents.scripted_model import scripted_model
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.memory.clear import ClearMemory
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store.db import Database


def build_llm(settings: Settings, *, scripted: bool = False) -> LLMClient:
    backend = ScriptedBackend(scripted_model, model="scripted-demo") if scripted else None
    return LLMClient.from_settings(settings, backend=backend)


def open_memory(settings: Settings, db: Database) -> MemoryAccess:
    return MemoryAccess(clear=ClearMemory(db), fuzzy=FuzzyMemory(db, VectorIndex.from_settings(settings)))
