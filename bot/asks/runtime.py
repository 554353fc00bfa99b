"""Building what an `AskService` needs from settings: the LLM clients (its memory: `bot.memory.wiring.open_memory`).

llm = build_llm(settings)                 # LLMNotConfiguredError when no endpoint is set
llm = build_llm(settings, scripted=True)  # the offline scripted stand-in (demos only: not answer quality)
private = build_private_llm(settings)     # the privacy split's private model (endpoint), or None when it is off
"""

from __future__ import annotations

from bot.errors import LocalLLMError
from bot.llm.client import LLMClient
from bot.llm.local_server import resolve_local_model
from bot.llm.provider import private_settings
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.settings import Settings


SCRIPTED_MODEL = "scripted-demo"
SCRIPTED_PRIVATE_MODEL = "scripted-private"


def scripted_backend(model: str = SCRIPTED_MODEL, *, latency_s: float = 0.0) -> ScriptedBackend:
    """The scripted stand-in; `latency_s` (ASKWITH_SCRIPTED_LATENCY_SECONDS) is how long each reply takes."""
    return ScriptedBackend(scripted_model, model=model, latency_s=latency_s)


def build_llm(settings: Settings, *, scripted: bool = False) -> LLMClient:
    latency_s = settings.scripted_latency_seconds
    return LLMClient.from_settings(settings, backend=scripted_backend(latency_s=latency_s) if scripted else None)


def build_private_llm(settings: Settings, *, scripted: bool = False) -> LLMClient | None:
    """The private model of the privacy split, or None when the split is off. A local private model
    (ASKWITH_PRIVATE_LOCAL_LLM) needs its server started: use `bot.llm.provider.open_llm_clients` for that."""
    if not settings.privacy_split:
        return None
    if scripted:
        return LLMClient.from_settings(
            settings, backend=scripted_backend(SCRIPTED_PRIVATE_MODEL, latency_s=settings.scripted_latency_seconds)
        )
    if resolve_local_model(settings.private_local_llm) is not None:
        raise LocalLLMError(
            "This command cannot start a local private model (ASKWITH_PRIVATE_LOCAL_LLM); "
            "point ASKWITH_PRIVATE_LLM_BASE_URL at a running server instead."
        )
    return LLMClient.from_settings(private_settings(settings))
