"""Slack action tokens are kept in the database, encrypted and expiring, so the process that runs an ask (an ask
worker that claimed it, or the one that resumed it after a restart) searches as the member whose message started it,
whichever process received that message."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import delete, select

from adapters.slack.live_search import ACTION_TOKEN_KEEP_S, SlackLiveSearch
from bot.store import models
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenStore


TEAM = "TSHARED"
TOKEN = "3483398453.action-token-of-alice"


@pytest.fixture
async def db(db: Database) -> AsyncIterator[Database]:
    """The database, holding the Slack workspace (as installing askwith leaves it)."""
    async with db.session() as session, session.begin():
        session.add(models.Workspace(platform="slack", external_id=TEAM, name="Shared"))
    yield db


def _process(db: Database, cipher: TokenCipher | None) -> SlackLiveSearch:
    """One process's live search of the workspace (nothing here calls Slack)."""
    tokens = UserTokenStore(db, cipher) if cipher is not None else None
    return SlackLiveSearch(AsyncWebClient(token="xoxb-shared"), db, tokens, team_id=TEAM)


async def test_a_token_received_by_one_process_is_found_by_another(db: Database) -> None:
    cipher = TokenCipher(TokenCipher.new_key())
    serve, worker = _process(db, cipher), _process(db, cipher)
    assert not await worker.can_search("UALICE")
    await serve.remember_action_token("UALICE", TOKEN)
    assert await worker.can_search("UALICE") and not await worker.can_search("UBOB")
    assert worker.action_tokens is not None and await worker.action_tokens.get("UALICE") == TOKEN
    restarted = _process(db, cipher)
    assert await restarted.can_search("UALICE")
    # A newer message's token replaces the older one, for every process.
    await worker.remember_action_token("UALICE", TOKEN + "-2")
    assert serve.action_tokens is not None and await serve.action_tokens.get("UALICE") == TOKEN + "-2"


async def test_a_token_is_stored_encrypted(db: Database) -> None:
    cipher = TokenCipher(TokenCipher.new_key())
    await _process(db, cipher).remember_action_token("UALICE", TOKEN)
    async with db.session() as session:
        row = (await session.execute(select(models.ActionToken))).scalar_one()
    stored = " ".join(str(getattr(row, c.key)) for c in models.ActionToken.__table__.columns)
    assert TOKEN not in stored and "action-token" not in stored
    assert cipher.decrypt(row.token_encrypted) == TOKEN
    other_key = _process(db, TokenCipher(TokenCipher.new_key()))  # a rotated key reads nothing, and says nothing
    assert not await other_key.can_search("UALICE")


async def test_a_token_expires_after_its_lifetime_everywhere(db: Database) -> None:
    cipher = TokenCipher(TokenCipher.new_key())
    serve, worker = _process(db, cipher), _process(db, cipher)
    await serve.remember_action_token("UALICE", TOKEN)
    assert worker.action_tokens is not None and serve.action_tokens is not None
    worker.action_tokens.clock = lambda: time.time() + ACTION_TOKEN_KEEP_S - 5
    assert await worker.can_search("UALICE")
    worker.action_tokens.clock = lambda: time.time() + ACTION_TOKEN_KEEP_S + 1
    assert not await worker.can_search("UALICE")
    # The next token stored sweeps the expired rows.
    serve.action_tokens.clock = worker.action_tokens.clock
    await serve.remember_action_token("UBOB", TOKEN + "-bob")
    async with db.session() as session:
        members = (await session.execute(select(models.ActionToken.member_platform_id))).scalars().all()
    assert members == ["UBOB"]


async def test_without_an_encryption_key_a_token_stays_in_its_process(db: Database) -> None:
    serve, worker = _process(db, None), _process(db, None)
    await serve.remember_action_token("UALICE", TOKEN)
    assert await serve.can_search("UALICE") and not await worker.can_search("UALICE")
    async with db.session() as session:
        assert (await session.execute(select(models.ActionToken))).first() is None


async def test_a_forgotten_workspace_keeps_no_token(db: Database) -> None:
    cipher = TokenCipher(TokenCipher.new_key())
    serve = _process(db, cipher)
    await serve.remember_action_token("UALICE", TOKEN)
    async with db.session() as session, session.begin():
        await session.execute(delete(models.Workspace).where(models.Workspace.external_id == TEAM))
    assert not await _process(db, cipher).can_search("UALICE")
    await _process(db, cipher).remember_action_token("UALICE", TOKEN)  # nothing to keep it for
    async with db.session() as session:
        assert (await session.execute(select(models.ActionToken))).first() is None
