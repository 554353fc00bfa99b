"""`/healthz` of `askwith serve` (ASKWITH_SLACK_DISTRIBUTION=oauth) lists the workspaces served now: one that installs
askwith appears, one that uninstalls it is gone (red team, before: an uninstalled workspace stayed listed)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from bot.settings import Settings
from bot.store.user_tokens import TokenCipher
from bot.store.world import World
from tests.conftest import SAMPLE_WORKSPACE
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_cloud import FakeSlackCloud
from tests.fakes.slack_requests import event_body, signed_headers
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import SIGNING_SECRET
from tests.integration.test_serve_platforms import Served


TEAM = "THEALTH"


@pytest.fixture
async def cloud() -> AsyncIterator[FakeSlackCloud]:
    world = dataclasses.replace(slack_world(World.load(SAMPLE_WORKSPACE)), id=TEAM)
    fake = FakeSlackCloud([FakeSlackApi(world, bot_token="xoxb-health")])
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


async def _platforms(http: httpx.AsyncClient) -> list[str]:
    return (await http.get("/healthz")).json()["platforms"]


async def test_healthz_drops_a_workspace_that_uninstalled_askwith(settings: Settings, cloud: FakeSlackCloud) -> None:
    fake = cloud.workspaces[0]
    settings = settings.replace(
        slack_distribution="oauth", slack_signing_secret=SIGNING_SECRET, slack_client_id=fake.client_id,
        slack_client_secret=fake.client_secret, slack_api_url=cloud.base_url,
        token_encryption_key=TokenCipher.new_key(), ingest_interval_seconds=0, link_secret="healthz-link-secret",
        public_url="https://askwith.example",
    )  # fmt: skip
    async with Served(settings) as served, httpx.AsyncClient(base_url=served.url, timeout=10) as http:
        assert await _platforms(http) == ["slack"]  # the install endpoint alone
        install = await http.get("/slack/install")
        state = parse_qs(urlparse(install.headers["location"]).query)["state"][0]
        cookie = {"cookie": install.headers["set-cookie"].split(";")[0]}
        code = fake.issue_install_code("UALICE")
        assert (
            await http.get("/slack/oauth_redirect", params={"code": code, "state": state}, headers=cookie)
        ).is_success
        assert await _platforms(http) == ["slack", "slack"]
        body = event_body(TEAM, {"type": "app_uninstalled"})
        assert (
            await http.post("/slack/events", content=body, headers=signed_headers(SIGNING_SECRET, body))
        ).is_success
        deadline = time.monotonic() + 30
        while await _platforms(http) != ["slack"]:
            assert time.monotonic() < deadline, await _platforms(http)
            await asyncio.sleep(0.05)
