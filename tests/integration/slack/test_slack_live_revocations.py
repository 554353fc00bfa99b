"""Live memory and a member's consent ending: a member who revokes askwith's access (`tokens_revoked`) or whose token
Slack refuses as dead is never searched with that token again (its grant is deleted), and `/askwith forget` deletes
their grants, their asks and what their agent shared in colleagues' asks, through the real bolt app."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select

from adapters.slack import texts
from bot.asks import models as ask_models
from bot.settings import Settings
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenStore
from bot.texts import rejection_texts
from tests.fakes.asks import QUESTION
from tests.fakes.slack_api import BOT_SCOPES
from tests.fakes.slack_changes import SlackChanges
from tests.fakes.slack_requests import bolt_request, command_body, event_body
from tests.fakes.slack_search import BOT_SEARCH_SCOPES
from tests.integration.slack.conftest import SIGNING_SECRET
from tests.integration.slack.test_slack_live_search import TEAM, Live, _dm_ask, _live, _until


@pytest.fixture
async def live(settings: Settings, sqlite_db: Database) -> AsyncIterator[Live]:
    async for value in _live(settings, sqlite_db, bot_scopes=BOT_SCOPES | BOT_SEARCH_SCOPES):
        yield value


def _tokens(live: Live) -> UserTokenStore:
    return UserTokenStore(live.db, TokenCipher.from_settings(live.settings))


async def _bob_is_left_out(live: Live) -> None:
    """Alice asks Bob: his agent cannot search (no grant), so the ask says so before it starts and sends nothing."""
    searches = len(live.search.calls)
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: rejection_texts.not_connected("bob", requester=False) in live.fake.posts(dm))
    await live.svc.drain()
    assert len(live.search.calls) == searches


async def test_tokens_revoked_deletes_the_members_grant_and_their_token_is_never_sent_again(live: Live) -> None:
    event = SlackChanges(live.fake).revoke_tokens("UBOB")
    response = await live.runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, event_body(TEAM, event)))
    assert response.status == 200
    await live.svc.drain()
    assert await _tokens(live).get("slack", TEAM, "UBOB") is None
    await _bob_is_left_out(live)


@pytest.mark.parametrize("code", ["token_revoked", "invalid_auth"])
async def test_a_search_refused_as_a_dead_token_deletes_that_grant(live: Live, code: str) -> None:
    grant = await _tokens(live).get("slack", TEAM, "UBOB")
    assert grant is not None
    if code == "token_revoked":
        live.fake.revoke_user_token("UBOB")  # the event announcing it never arrived
    else:
        del live.fake.user_tokens[grant.token]  # Slack no longer knows the token
    bob_dm = live.fake.world.dm(live.fake.world.bot_id, "UBOB").id
    await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: texts.live_search_refused("revoked") in live.fake.posts(bob_dm))
    await live.svc.drain()
    assert await _tokens(live).get("slack", TEAM, "UBOB") is None
    await _bob_is_left_out(live)


async def _command(live: Live, member: str, text: str) -> str:
    body = command_body(TEAM, member, "/askwith", text, response_url=live.fake.hooks_url + "c/1")
    response = await live.runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, body))
    assert response.status == 200, response.body
    return str(json.loads(response.body)["text"])


async def _turns_of(db: Database, agent: str) -> int:
    async with db.session() as session:
        query = select(func.count()).select_from(ask_models.Turn).where(ask_models.Turn.agent == agent)
        return int(await session.scalar(query))


async def test_forget_in_live_mode_deletes_the_grant_the_asks_and_what_the_agent_shared(live: Live) -> None:
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: any("14 March" in p for p in live.fake.posts(dm)))
    await live.svc.drain()
    assert await _turns_of(live.db, "bob") > 0 and await _turns_of(live.db, "alice") > 0

    reply = await _command(live, "UBOB", "forget")
    assert reply.startswith("Done: askwith deleted your memory"), reply
    assert await _tokens(live).get("slack", TEAM, "UBOB") is None
    assert await _turns_of(live.db, "bob") == 0  # what Bob's agent shared in Alice's ask
    async with live.db.session() as session:
        assert await session.scalar(select(func.count()).select_from(ask_models.Ask)) == 1  # Alice's ask stays
    assert not (await live.svc.member_settings.get(await live.svc.workspace(), "UBOB")).opted_in

    reply = await _command(live, "UALICE", "forget")
    assert "1 ask(s) of yours" in reply, reply
    async with live.db.session() as session:
        assert await session.scalar(select(func.count()).select_from(ask_models.Ask)) == 0
    assert live.svc.live_search is not None and not await live.svc.live_search.can_search("UALICE")
