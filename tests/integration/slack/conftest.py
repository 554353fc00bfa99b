"""Fixtures for the Slack app tests: a Slack-shaped world, the fake Slack Web API serving it, settings pointing the
real `AsyncWebClient` at the fake, and a `SlackPort` over that client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse

from adapters.slack.app import build_app
from adapters.slack.client import web_client
from adapters.slack.install import MemberInstallFlow
from adapters.slack.port import SlackPort
from adapters.slack.services import SlackServices
from bot.consent.pending import ApprovalRegistry
from bot.settings import Settings
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenStore
from bot.store.world import World
from memory_ingest.worker import IngestWorker
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_requests import block_actions_body, bolt_request, command_body, event_body
from tests.fakes.slack_shapes import slack_world


SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


@pytest.fixture
def world(sample_world: World) -> World:
    return slack_world(sample_world)


@pytest.fixture
async def fake_slack(world: World) -> AsyncIterator[FakeSlackApi]:
    api = FakeSlackApi(world)
    await api.start()
    try:
        yield api
    finally:
        await api.stop()


@pytest.fixture
def slack_settings(settings: Settings, fake_slack: FakeSlackApi) -> Settings:
    return settings.replace(
        slack_bot_token=fake_slack.bot_token,
        slack_signing_secret=SIGNING_SECRET,
        slack_client_id=fake_slack.client_id,
        slack_client_secret=fake_slack.client_secret,
        slack_api_url=fake_slack.base_url,
        token_encryption_key=TokenCipher.new_key(),
    )


@pytest.fixture
def user_tokens(sqlite_db: Database, slack_settings: Settings) -> UserTokenStore:
    return UserTokenStore(sqlite_db, TokenCipher.from_settings(slack_settings))


@pytest.fixture
def port(slack_settings: Settings, user_tokens: UserTokenStore) -> SlackPort:
    return SlackPort(web_client(slack_settings), approvals=ApprovalRegistry(), user_tokens=user_tokens)


@pytest.fixture
async def services(
    slack_settings: Settings, sqlite_db: Database, port: SlackPort, user_tokens: UserTokenStore
) -> AsyncIterator[SlackServices]:
    worker = IngestWorker(port, sqlite_db, page_size=50)
    install = MemberInstallFlow(slack_settings, port.client, user_tokens, redirect_uri=None)
    svc = SlackServices(slack_settings, sqlite_db, port, asks=None, ingest=worker, install=install)
    yield svc
    await svc.drain()


@pytest.fixture
def bolt_app(services: SlackServices) -> AsyncApp:
    return build_app(services)


class Slack:
    """Sends what Slack would send to the bolt app, signed, and returns bolt's response."""

    def __init__(self, app: AsyncApp, fake: FakeSlackApi) -> None:
        self.app = app
        self.fake = fake
        self.world = fake.world
        self.last_body = ""

    async def send(self, body: str, **kwargs: Any) -> BoltResponse:
        return await self.app.async_dispatch(bolt_request(SIGNING_SECRET, body, **kwargs))

    async def command(self, user: str, command: str, text: str, **kwargs: Any) -> BoltResponse:
        self.last_body = command_body(self.world.id, user, command, text, response_url=self.fake.hooks_url + "c/1")
        return await self.send(self.last_body, **kwargs)

    async def event(self, event: dict[str, Any], **kwargs: Any) -> BoltResponse:
        return await self.send(event_body(self.world.id, event), **kwargs)

    async def click(self, user: str, channel: str, action_id: str, value: str) -> BoltResponse:
        url = self.fake.hooks_url + "actions/1"
        return await self.send(block_actions_body(self.world.id, user, channel, action_id, value, response_url=url))


@pytest.fixture
def slack(bolt_app: AsyncApp, fake_slack: FakeSlackApi) -> Slack:
    return Slack(bolt_app, fake_slack)


def ack_text(response: BoltResponse) -> str:
    """The text of an acknowledgement, which only the member who typed the command sees."""
    assert response.status == 200, response.body
    body = json.loads(response.body)
    assert body["response_type"] == "ephemeral"
    return body["text"]
