"""Where the LLM lives: the configured OpenAI-compatible endpoint, or a local llama.cpp server askwith runs itself.

Every command that talks to a model opens its client here, so turning on ASKWITH_LOCAL_LLM is the only change
needed to run askwith on a local model:

    async with open_llm_client(settings) as client:
        result = await client.complete(request)

With the privacy split (privacy level L2) a second, private model reads raw memory; it is configured by the
ASKWITH_PRIVATE_* settings the same way (an endpoint, or ASKWITH_PRIVATE_LOCAL_LLM):

    async with open_llm_clients(settings) as llms:
        llms.main, llms.private   # private is None when the split is off
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from bot.llm.client import LLMClient
from bot.llm.local_server import LocalLLMServer, resolve_local_model
from bot.llm.types import LLMBackend
from bot.settings import Settings


# llama.cpp's Python server computes one completion at a time; more requests in flight would only wait inside the
# server, where the client's per-attempt time-out would count the waiting against them.
LOCAL_CONCURRENCY = 1


@asynccontextmanager
async def llm_endpoint(settings: Settings) -> AsyncIterator[Settings]:
    """`settings` with the LLM endpoint filled in: a local server started for ASKWITH_LOCAL_LLM (and stopped when
    the block ends), or the configured ASKWITH_LLM_BASE_URL unchanged when the local model is off."""
    model = resolve_local_model(settings.local_llm)
    if model is None:
        yield settings
        return
    async with LocalLLMServer.from_settings(model, settings) as server:
        yield settings.replace(
            llm_base_url=server.base_url,
            llm_model=server.model_name,
            llm_api_key="",
            llm_concurrency=min(settings.llm_concurrency, LOCAL_CONCURRENCY),
        )


@asynccontextmanager
async def open_llm_client(settings: Settings, *, backend: LLMBackend | None = None) -> AsyncIterator[LLMClient]:
    """The LLM client for `settings`, closed (and its local server stopped) when the block ends.

    Args:
        backend (`LLMBackend | None`): a stand-in (e.g. scripted) instead of the configured endpoint.
    """
    async with AsyncExitStack() as stack:
        endpoint = settings if backend is not None else await stack.enter_async_context(llm_endpoint(settings))
        client = LLMClient.from_settings(endpoint, backend=backend)
        stack.push_async_callback(client.aclose)
        yield client


@dataclass(frozen=True)
class LLMClients:
    """The main model, and the private model of the privacy split (None when the split is off)."""

    main: LLMClient
    private: LLMClient | None = None

    @property
    def memory_reader(self) -> LLMClient:
        """The model allowed to read raw memory (session texts, search hits)."""
        return self.private or self.main


def model_configured(settings: Settings) -> bool:
    """Whether a main model is set up: an endpoint, or a local model askwith starts."""
    return settings.llm_configured or resolve_local_model(settings.local_llm) is not None


def private_settings(settings: Settings) -> Settings:
    """`settings` with the private model in the main model's fields, so one code path opens either model."""
    if resolve_local_model(settings.private_local_llm) is None:
        settings.require("private_llm_model")  # an endpoint needs the name of its model
    return settings.replace(
        llm_base_url=settings.private_llm_base_url,
        llm_model=settings.private_llm_model,
        llm_api_key=settings.private_llm_api_key,
        local_llm=settings.private_local_llm,
    )


@asynccontextmanager
async def open_llm_clients(
    settings: Settings, *, backend: LLMBackend | None = None, private_backend: LLMBackend | None = None
) -> AsyncIterator[LLMClients]:
    """The main client and, with the privacy split on, the private one; all closed (local servers stopped) after.

    Args:
        backend / private_backend (`LLMBackend | None`): stand-ins (e.g. scripted) instead of the configured models.
    """
    async with AsyncExitStack() as stack:
        main = await stack.enter_async_context(open_llm_client(settings, backend=backend))
        private = None
        if settings.privacy_split:
            if private_backend is None and _same_local_model(settings):
                private = main  # one local server is enough when both roles name the same model
            else:
                chosen = private_settings(settings)
                private = await stack.enter_async_context(open_llm_client(chosen, backend=private_backend))
        yield LLMClients(main, private)


def _same_local_model(settings: Settings) -> bool:
    main, private = resolve_local_model(settings.local_llm), resolve_local_model(settings.private_local_llm)
    return main is not None and main == private
