"""Where the LLM lives: the configured OpenAI-compatible endpoint, or a local llama.cpp server askwith runs itself.

Every command that talks to a model opens its client here, so turning on ASKWITH_LOCAL_LLM is the only change
needed to run askwith on a local model:

    async with open_llm_client(settings) as client:
        result = await client.complete(request)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

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
