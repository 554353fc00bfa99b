"""An endpoint answering HTTP 200 with a body that cannot be read (cut off mid-JSON, not JSON, wrong shape): the real
`openai` client against a loopback server. Before: a JSON decode error escaped the backend (only `OpenAIError` was
caught), a 400-line traceback, and the ask stayed `running`. After: the ask ends `failed` with the readable
"model unavailable" text and one final post."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from bot.asks import models
from bot.asks.service import AskRequest
from bot.errors import LLMUnavailableError
from bot.llm.client import LLMClient
from bot.llm.openai_backend import OpenAIBackend
from bot.llm.types import LLMRequest
from bot.settings import Settings
from bot.store.db import Database
from bot.texts import failure_texts
from tests.fakes.asks import QUESTION, build, two_fact_world


BODIES = {
    "truncated": '{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "mess',
    "not_json": "<html>502 Bad Gateway</html>",
    "wrong_shape": '{"choices": "none"}',
}


@pytest.fixture(params=sorted(BODIES))
async def broken_endpoint(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    body = BODIES[request.param]

    async def completions(_request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


def _fast(settings: Settings) -> Settings:
    return settings.replace(llm_backoff_seconds=0.0, llm_max_retries=1, llm_timeout_seconds=5.0)


async def test_unreadable_reply_is_a_readable_llm_error(broken_endpoint: str, settings: Settings) -> None:
    backend = OpenAIBackend(base_url=broken_endpoint, model="m", timeout_s=5.0)
    client = LLMClient.from_settings(_fast(settings), backend=backend)
    try:
        with pytest.raises(LLMUnavailableError):
            await client.complete(LLMRequest([{"role": "user", "content": "hi"}], purpose="act"))
    finally:
        await client.aclose()


async def test_ask_ends_failed_not_running(broken_endpoint: str, sqlite_db: Database, settings: Settings) -> None:
    backend = OpenAIBackend(base_url=broken_endpoint, model="m", timeout_s=5.0)
    h = await build(sqlite_db, two_fact_world(), settings=_fast(settings), backend=backend)
    try:
        outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    finally:
        await h.llm.aclose()

    assert outcome.status == "failed" and outcome.failure == failure_texts.failure_llm_unavailable()
    ask = await h.service.load(outcome.ask_id)
    assert ask.status == models.AskStatus.FAILED.value
    dm = h.world.dm(h.world.bot_id, "alice").id
    assert [m.text for m in h.world.messages[dm] if f"transcripts show {outcome.ask_id}" in m.text] != []
