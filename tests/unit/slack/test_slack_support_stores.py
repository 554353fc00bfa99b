"""The platform-neutral stores the Slack app writes through: delivery log, encrypted user tokens, member settings,
and the approvals registry."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from bot.consent.pending import ApprovalRegistry
from bot.errors import InvalidSecretSettingError, StoredTokenError, UnknownChannelError, UnknownMemberError
from bot.platform.port import ApprovalDecision, SharePolicy
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.deliveries import DeliveryLog
from bot.store.member_settings import MemberSettingsStore
from bot.store.user_tokens import TokenCipher, UserTokenGrant, UserTokenStore
from bot.store.world import World
from bot.store.world_mirror import mirror_world


async def test_a_delivery_key_is_first_only_once_even_concurrently(db: Database) -> None:
    log = DeliveryLog(db)
    results = await asyncio.gather(*(log.first_time("slack", "command:T1:trig-1") for _ in range(5)))
    assert sorted(results) == [False, False, False, False, True]
    assert await log.first_time("discord", "command:T1:trig-1")  # keys are per platform


async def test_user_tokens_are_encrypted_at_rest_and_need_the_same_key(db: Database) -> None:
    key = TokenCipher.new_key()
    store = UserTokenStore(db, TokenCipher(key))
    await store.save(UserTokenGrant("slack", "T1", "U1", "xoxp-secret-1", ("im:history",)))
    await store.save(UserTokenGrant("slack", "T1", "U1", "xoxp-secret-2", ("im:history", "mpim:history")))
    assert await store.grants("slack", "T1") == [
        UserTokenGrant("slack", "T1", "U1", "xoxp-secret-2", ("im:history", "mpim:history"))
    ]
    async with db.session() as session:
        blobs = list((await session.execute(select(models.UserToken.token_encrypted))).scalars())
    assert len(blobs) == 1 and "xoxp" not in blobs[0]
    with pytest.raises(StoredTokenError):
        await UserTokenStore(db, TokenCipher(TokenCipher.new_key())).grants("slack", "T1")
    await store.revoke("slack", "T1", "U1")
    assert await store.grants("slack", "T1") == []


def test_a_malformed_key_is_named_without_echoing_it() -> None:
    with pytest.raises(InvalidSecretSettingError) as info:
        TokenCipher("not-a-fernet-key")
    assert "ASKWITH_TOKEN_ENCRYPTION_KEY" in str(info.value) and "not-a-fernet-key" not in str(info.value)


async def test_member_settings(db: Database, sample_world: World) -> None:
    await mirror_world(db, sample_world)
    store, ws = MemberSettingsStore(db), WorkspaceKey("local", sample_world.id)
    assert (await store.set_share_policy(ws, "bob", SharePolicy.NEVER)).share == SharePolicy.NEVER
    assert (await store.set_opted_in(ws, "bob", False)).opted_in is False
    assert (await store.set_excluded(ws, "bob", "C-launch", True)).excluded_channels == ("C-launch",)
    assert (await store.set_excluded(ws, "bob", "D-alice-bob", True)).excluded_channels == ("C-launch", "D-alice-bob")
    assert (await store.set_excluded(ws, "bob", "C-launch", False)).excluded_channels == ("D-alice-bob",)
    with pytest.raises(UnknownChannelError):
        await store.set_excluded(ws, "bob", "C-nope", True)
    with pytest.raises(UnknownMemberError):
        await store.get(ws, "zed")


async def test_approvals_registry() -> None:
    registry = ApprovalRegistry()
    assert registry.resolve("early", ApprovalDecision.APPROVED)  # a click racing the prompt is kept
    assert await registry.wait("early", timeout_s=1) == ApprovalDecision.APPROVED
    assert await registry.wait("late", timeout_s=0.01) == ApprovalDecision.TIMEOUT
    assert not registry.resolve("late", ApprovalDecision.APPROVED)  # a timeout is final
    assert registry.decision("late") == ApprovalDecision.TIMEOUT
