"""A workspace that removed askwith while its bot token is already dead (Slack answers `invalid_auth` to every call
with it) leaves nothing behind: at start-up the refused token counts as an uninstall, and an `app_uninstalled` for a
team whose services are not open is handled by team id, through the real bolt app, without reopening it (before: a
500 while reopening it, and its data kept for good)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator

import pytest

from adapters.slack.oauth_runtime import SlackOAuthRuntime
from bot.asks.forget import count_workspace_rows, workspace_id_of
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.settings import Settings
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenGrant, UserTokenStore
from bot.store.world import World
from tests.conftest import SAMPLE_WORKSPACE
from tests.fakes.asks import ask_factory
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_cloud import FakeSlackCloud
from tests.fakes.slack_requests import bolt_request, event_body
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import SIGNING_SECRET
from tests.integration.slack.test_slack_oauth_install import _install


TEAM_GONE, TEAM_KEPT = "TGONE", "TKEPT"
GONE_TOKEN = "xoxb-gone"


@pytest.fixture
async def cloud() -> AsyncIterator[FakeSlackCloud]:
    gone = dataclasses.replace(slack_world(World.load(SAMPLE_WORKSPACE)), id=TEAM_GONE)
    kept = dataclasses.replace(slack_world(World.load(SAMPLE_WORKSPACE)), id=TEAM_KEPT, name="Kept Inc")
    fake = FakeSlackCloud([FakeSlackApi(gone, bot_token=GONE_TOKEN), FakeSlackApi(kept, bot_token="xoxb-kept")])
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
def oauth_settings(settings: Settings, cloud: FakeSlackCloud) -> Settings:
    fake = cloud.workspaces[0]
    return settings.replace(
        slack_distribution="oauth", slack_memory="mirror", slack_marketplace=True,
        slack_signing_secret=SIGNING_SECRET, slack_client_id=fake.client_id, slack_client_secret=fake.client_secret,
        slack_api_url=cloud.base_url, token_encryption_key=TokenCipher.new_key(),
    )  # fmt: skip


async def _runtime(settings: Settings, db: Database) -> SlackOAuthRuntime:
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(lambda *_: "unused"))
    memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None)
    return await SlackOAuthRuntime.start(
        settings, db, ask_service=ask_factory(settings, db, llm, memory), memory=memory
    )


def _removed_at_slack(fake: FakeSlackApi, code: str = "invalid_auth") -> None:
    """The workspace uninstalled the app: Slack no longer knows its bot token (every call with it: `invalid_auth`),
    or answers that it was revoked (`token_revoked`)."""
    if code == "token_revoked":
        fake.revoked_tokens.add(fake.bot_token)
    else:
        fake.bot_token = "xoxb-never-issued"


async def _installed(settings: Settings, db: Database, cloud: FakeSlackCloud, *teams: str) -> dict[str, int]:
    """Install the teams, give the gone team's member a token, stop; returns each team's workspace id."""
    runtime = await _runtime(settings, db)
    try:
        for team in teams:
            await _install(runtime, cloud.workspace(team))
    finally:
        await runtime.stop()
    tokens = UserTokenStore(db, TokenCipher.from_settings(settings))
    await tokens.save(UserTokenGrant("slack", TEAM_GONE, "UALICE", "xoxp-alice", ()))
    found = {team: await workspace_id_of(db, "slack", team) for team in teams}
    assert all(found.values()), found
    return {team: workspace_id or 0 for team, workspace_id in found.items()}


@pytest.mark.parametrize("code", ["invalid_auth", "token_revoked"])
async def test_a_bot_token_refused_at_start_up_counts_as_an_uninstall(
    oauth_settings: Settings, sqlite_db: Database, cloud: FakeSlackCloud, caplog: pytest.LogCaptureFixture, code: str
) -> None:
    ids = await _installed(oauth_settings, sqlite_db, cloud, TEAM_GONE, TEAM_KEPT)
    kept_before = await count_workspace_rows(sqlite_db, ids[TEAM_KEPT], ("slack", TEAM_KEPT))
    _removed_at_slack(cloud.workspace(TEAM_GONE), code)

    with caplog.at_level(logging.WARNING):
        runtime = await _runtime(oauth_settings, sqlite_db)
    try:
        assert runtime.workspaces.teams == [TEAM_KEPT]
        assert await runtime.workspaces.store.async_find_bot(enterprise_id=None, team_id=TEAM_GONE) is None
        gone = await count_workspace_rows(sqlite_db, ids[TEAM_GONE], ("slack", TEAM_GONE))
        assert all(n == 0 for n in gone.values()), gone
        assert await count_workspace_rows(sqlite_db, ids[TEAM_KEPT], ("slack", TEAM_KEPT)) == kept_before
        said = [r for r in caplog.records if r.levelno == logging.WARNING and TEAM_GONE in r.getMessage()]
        assert any(code in r.getMessage() for r in said), [r.getMessage() for r in said]
        assert not any(GONE_TOKEN in r.getMessage() for r in caplog.records)
    finally:
        await runtime.stop()


async def test_app_uninstalled_for_a_team_not_open_is_deleted_by_team_id(
    oauth_settings: Settings, sqlite_db: Database, cloud: FakeSlackCloud
) -> None:
    ids = await _installed(oauth_settings, sqlite_db, cloud, TEAM_GONE)
    gone = cloud.workspace(TEAM_GONE)
    gone.rate_limit("auth.test", times=1, retry_after=120)  # start-up cannot reach it: it opens on its next request
    runtime = await _runtime(oauth_settings, sqlite_db)
    try:
        assert runtime.workspaces.teams == []
        # a refusal that says nothing of the token (here a long rate limit) deletes nothing
        assert await runtime.workspaces.store.async_find_bot(enterprise_id=None, team_id=TEAM_GONE) is not None
        _removed_at_slack(gone)
        request = bolt_request(SIGNING_SECRET, event_body(TEAM_GONE, {"type": "app_uninstalled"}))
        response = await runtime.app.async_dispatch(request)
        assert response.status == 200, response.body
        assert runtime.workspaces.teams == []
        assert await runtime.workspaces.store.async_find_bot(enterprise_id=None, team_id=TEAM_GONE) is None
        left = await count_workspace_rows(sqlite_db, ids[TEAM_GONE], ("slack", TEAM_GONE))
        assert all(n == 0 for n in left.values()), left
    finally:
        await runtime.stop()
