"""Full HTTP round trips: the ASGI app served by uvicorn on a real socket, mounted under /slack; and the member
install flow that stores a user token encrypted."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlparse

import aiohttp
import pytest
import uvicorn
from sqlalchemy import select

from adapters.slack import texts
from adapters.slack.http import SlackHttpApp
from adapters.slack.services import SlackServices
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.world import World
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_requests import command_body, signed_headers
from tests.integration.slack.conftest import SIGNING_SECRET


async def _mounted(app: SlackHttpApp) -> object:
    """The Slack app mounted under /slack of a bigger ASGI app, as the serving process does."""

    async def outer(scope: dict, receive, send) -> None:  # noqa: ANN001 - ASGI callables
        if scope["type"] == "http" and scope["path"].startswith("/slack/"):
            await app({**scope, "root_path": scope.get("root_path", "") + "/slack"}, receive, send)
            return
        if scope["type"] == "lifespan":
            await app(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"elsewhere"})

    return outer


@pytest.fixture
async def served(bolt_app, services: SlackServices) -> AsyncIterator[str]:  # noqa: ANN001 - AsyncApp
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = await _mounted(SlackHttpApp(bolt_app, install=services.install, signing_secret=SIGNING_SECRET))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


async def test_a_signed_command_over_http_is_answered_and_a_forged_one_is_401(served: str, world: World) -> None:
    body = command_body(world.id, "UALICE", "/ask-with", "help")
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{served}/slack/events", data=body, headers=signed_headers(SIGNING_SECRET, body)) as r:
            assert r.status == 200
            assert (await r.json())["text"] == texts.ASK_HELP
        forged = signed_headers("wrong-secret", body)
        async with http.post(f"{served}/slack/events", data=body, headers=forged) as r:
            assert r.status == 401
        async with http.get(f"{served}/slack/nowhere") as r:
            assert r.status == 404


async def test_install_flow_stores_the_members_token_encrypted_and_ingestion_uses_it(
    served: str, services: SlackServices, fake_slack: FakeSlackApi, world: World
) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{served}/slack/install", allow_redirects=False) as r:
            assert r.status == 302
            authorize = urlparse(r.headers["location"])
        query = parse_qs(authorize.query)
        assert query["user_scope"] == ["im:history,mpim:history,im:read,mpim:read"]
        assert query["client_id"] == [fake_slack.client_id]
        # Slack would show its consent screen; the member approves and the browser comes back with a code.
        code = fake_slack.issue_oauth_code("UALICE")
        callback = f"{served}/slack/oauth_redirect?code={code}&state={query['state'][0]}"
        async with http.get(callback) as r:
            assert r.status == 200 and "UALICE" in await r.text()
        replay_code = fake_slack.issue_oauth_code("UALICE")
        replay = f"{served}/slack/oauth_redirect?code={replay_code}&state={query['state'][0]}"
        async with http.get(replay) as r:  # the same state twice: refused, the state is good once
            assert r.status == 400 and "already used" in await r.text()
        async with http.get(f"{served}/slack/oauth_redirect?code=x&state=forged.1.abc") as r:
            assert r.status == 400 and "not issued by this askwith" in await r.text()
    token = next(t for t, actor in fake_slack.user_tokens.items() if actor.user_id == "UALICE")
    async with services.db.session() as session:
        blobs = list((await session.execute(select(models.UserToken.token_encrypted))).scalars())
    assert len(blobs) == 1 and token not in blobs[0]
    await services.ingest.mirror()
    assert "DDALICEBOB" not in {c.id for c in await services.port.list_channels()}  # memory off: token unused
    await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), "UALICE", True)
    channels = {c.id for c in await services.port.list_channels()}
    assert "DDALICEBOB" in channels  # read with Alice's token


async def test_the_oauth_exchange_logs_no_secret_code_or_token_at_debug(
    services: SlackServices, fake_slack: FakeSlackApi, caplog: pytest.LogCaptureFixture
) -> None:
    assert services.install is not None
    code = fake_slack.issue_oauth_code("UBOB")
    with caplog.at_level(logging.DEBUG):
        grant = await services.install.complete(code, services.install.new_state())
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert grant.token.startswith("xoxp-")
    for secret in (fake_slack.client_secret, code, grant.token):
        assert secret not in logged
