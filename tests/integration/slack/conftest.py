"""Fixtures for the Slack app tests: a Slack-shaped world, the fake Slack Web API serving it, settings pointing the
real `AsyncWebClient` at the fake, and a `SlackPort` over that client."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.slack.client import web_client
from adapters.slack.port import SlackPort
from bot.approvals import ApprovalRegistry
from bot.settings import Settings
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenStore
from bot.world import World
from tests.fakes.slack_api import FakeSlackApi
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
