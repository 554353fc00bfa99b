"""`askwith serve` with ASKWITH_SLACK_DISTRIBUTION=oauth: the install endpoint is mounted before any workspace has
installed askwith, a workspace installs through it over real HTTP, and its commands are answered at once; setting
SLACK_CLIENT_ID/SECRET alone keeps the single-workspace mode."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from adapters.slack.serve import SLACK
from bot.errors import InvalidSettingError
from bot.settings import Settings
from bot.store.user_tokens import TokenCipher
from bot.store.world import World
from tests.conftest import SAMPLE_WORKSPACE
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_cloud import FakeSlackCloud
from tests.fakes.slack_requests import command_body, signed_headers
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import SIGNING_SECRET
from tests.integration.test_serve_platforms import Served


@pytest.fixture
async def cloud() -> AsyncIterator[FakeSlackCloud]:
    world = dataclasses.replace(slack_world(World.load(SAMPLE_WORKSPACE)), id="TSERVED")
    fake = FakeSlackCloud([FakeSlackApi(world, bot_token="xoxb-served")])
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


def test_client_credentials_alone_keep_the_single_workspace_mode(settings: Settings) -> None:
    with_credentials = settings.replace(slack_client_id="1.2", slack_client_secret="s")
    assert not SLACK.enabled(with_credentials)  # no bot token, no OAuth distribution: Slack is off
    assert SLACK.enabled(with_credentials.replace(slack_distribution="oauth"))
    with pytest.raises(InvalidSettingError, match="ASKWITH_SLACK_DISTRIBUTION"):
        SLACK.enabled(with_credentials.replace(slack_distribution="Oauth2"))


async def test_serve_mounts_the_install_flow_and_a_newly_installed_workspace_is_answered(
    settings: Settings, cloud: FakeSlackCloud
) -> None:
    fake = cloud.workspaces[0]
    settings = settings.replace(
        slack_distribution="oauth",
        slack_signing_secret=SIGNING_SECRET,
        slack_client_id=fake.client_id,
        slack_client_secret=fake.client_secret,
        slack_api_url=cloud.base_url,
        token_encryption_key=TokenCipher.new_key(),
        ingest_interval_seconds=0,
        link_secret="oauth-serve-link-secret",
        public_url="https://askwith.example",
    )
    async with Served(settings) as served, httpx.AsyncClient(base_url=served.url, timeout=10) as http:
        install = await http.get("/slack/install")
        assert install.status_code == 302
        state = parse_qs(urlparse(install.headers["location"]).query)["state"][0]
        code = fake.issue_install_code("UALICE")
        # bolt's state cookie is Secure: a browser sends it back over https, as here by hand.
        cookie = {"cookie": install.headers["set-cookie"].split(";")[0]}
        redirect = await http.get("/slack/oauth_redirect", params={"code": code, "state": state}, headers=cookie)
        assert redirect.status_code == 200, redirect.text
        body = command_body("TSERVED", "UALICE", "/askwith", "on", response_url=fake.hooks_url + "c/1")
        response = await http.post("/slack/events", content=body, headers=signed_headers(SIGNING_SECRET, body))
        assert response.status_code == 200 and response.json()["response_type"] == "ephemeral"
        assert any(c.token_kind == "bot" for c in fake.calls_to("auth.test"))
        # The new workspace joined the process: listed, its ingestion scheduled, its ask worker running.
        assert (await http.get("/healthz")).json()["platforms"] == ["slack", "slack"]
    assert served.task is not None and served.task.exception() is None
