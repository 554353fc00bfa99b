"""The installation store bolt's OAuth flow writes to: one bot per workspace, replaced on reinstall, encrypted at rest,
deleted on uninstall; and OAuth states that are good once, on both databases."""

from __future__ import annotations

from datetime import UTC, datetime

from slack_sdk.oauth.installation_store import Installation
from sqlalchemy import select

from adapters.slack.installations import EncryptedInstallationStore, SingleUseStateStore
from bot.store import models
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher


def _installation(team: str, token: str) -> Installation:
    return Installation(
        app_id="A1", team_id=team, team_name=team.lower(), bot_token=token, bot_id="B1", bot_user_id="UBOT",
        bot_scopes=["commands", "chat:write"], user_id="UADMIN", installed_at=datetime.now(UTC),
    )  # fmt: skip


async def test_bots_are_kept_per_workspace_encrypted_replaced_on_reinstall_and_deleted(db: Database) -> None:
    store = EncryptedInstallationStore(db, TokenCipher(TokenCipher.new_key()))
    await store.async_save(_installation("T1", "xoxb-one"))
    await store.async_save(_installation("T2", "xoxb-two"))
    await store.async_save(_installation("T1", "xoxb-one-again"))  # a reinstall brings a new token
    bot = await store.async_find_bot(enterprise_id=None, team_id="T1")
    assert bot is not None and bot.bot_token == "xoxb-one-again" and bot.bot_scopes == ["commands", "chat:write"]
    found = await store.async_find_installation(enterprise_id=None, team_id="T2")
    assert found is not None and found.bot_token == "xoxb-two"
    assert await store.async_find_installation(enterprise_id=None, team_id="T2", user_id="UADMIN") is None
    async with db.session() as session:
        blobs = list((await session.execute(select(models.SlackInstallation.bot_token_encrypted))).scalars())
    assert len(blobs) == 2 and not any("xoxb" in blob for blob in blobs)
    await store.async_delete_all(enterprise_id=None, team_id="T1")
    assert await store.async_find_bot(enterprise_id=None, team_id="T1") is None
    assert [b.team_id for b in await store.bots()] == ["T2"]


async def test_an_oauth_state_is_good_once_and_only_when_signed_with_the_secret(db: Database) -> None:
    states = SingleUseStateStore("app-secret", db)
    state = await states.async_issue()
    assert await states.async_consume(state)
    assert not await states.async_consume(state)  # replayed
    assert not await states.async_consume(await SingleUseStateStore("other-secret", db).async_issue())
    assert not await SingleUseStateStore("app-secret", db, ttl_seconds=-1).async_consume(await states.async_issue())
