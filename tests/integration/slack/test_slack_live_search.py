"""Live memory in an OAuth-installed workspace: asks answered from Slack's Real-time Search API (the fake's
`assistant.search.context`, through the real bolt app and `AsyncWebClient`), nothing of what was found kept in
askwith's message tables or vector indexes, each member searched only as they see Slack, and a refused search told
plainly to the member."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from adapters.slack import texts
from adapters.slack.live_search import SlackLiveSearch, hearing_in
from adapters.slack.oauth_runtime import SlackOAuthRuntime
from adapters.slack.services import SlackServices
from bot.asks import models as ask_models
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.source import LiveQuery
from bot.memory.vector_index import VectorIndex
from bot.platform.port import Channel, ChannelKind
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.user_tokens import TokenCipher, UserTokenGrant, UserTokenStore
from bot.texts import rejection_texts
from tests.fakes.asks import QUESTION, ask_factory, two_fact_world
from tests.fakes.slack_api import BOT_SCOPES, USER_SCOPES, FakeSlackApi
from tests.fakes.slack_cloud import FakeSlackCloud
from tests.fakes.slack_requests import bolt_request, event_body
from tests.fakes.slack_search import ACTION_TOKEN_TTL_S, BOT_SEARCH_SCOPES, SEARCH_SCOPES, FakeSlackSearch
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import SIGNING_SECRET
from tests.integration.slack.test_slack_oauth_install import _install


TEAM = "TLIVE"


@dataclasses.dataclass
class Live:
    runtime: SlackOAuthRuntime
    fake: FakeSlackApi
    search: FakeSlackSearch
    svc: SlackServices
    db: Database
    settings: Settings


async def _live(settings: Settings, db: Database, *, bot_scopes: frozenset[str]) -> AsyncIterator[Live]:
    world = dataclasses.replace(slack_world(two_fact_world()), id=TEAM)
    fake = FakeSlackApi(world, bot_token="xoxb-live", bot_scopes=bot_scopes)
    search = FakeSlackSearch.install(fake)
    cloud = FakeSlackCloud([fake])
    await cloud.start()
    settings = settings.replace(
        slack_distribution="oauth", slack_app="marketplace", slack_signing_secret=SIGNING_SECRET,
        slack_client_id=fake.client_id,
        slack_client_secret=fake.client_secret, slack_api_url=cloud.base_url,
        token_encryption_key=TokenCipher.new_key(),
    )  # fmt: skip
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None)  # what a mirror workspace would read: never used here
    runtime = await SlackOAuthRuntime.start(
        settings, db, ask_service=ask_factory(settings, db, llm, memory), memory=memory
    )
    try:
        await _install(runtime, fake)
        svc = await runtime.workspaces.for_team(TEAM)
        assert svc is not None and svc.live_search is not None and svc.ingest is None
        for member in ("UALICE", "UBOB", "UERIN"):
            await svc.member_settings.set_opted_in(WorkspaceKey("slack", TEAM), member, True)
        # Bob connected with the search scopes; Alice did not (she asks from a message: its action_token).
        tokens = UserTokenStore(db, TokenCipher.from_settings(settings))
        bob = fake.grant_user_token("UBOB", USER_SCOPES | SEARCH_SCOPES)
        await tokens.save(UserTokenGrant("slack", TEAM, "UBOB", bob, tuple(sorted(USER_SCOPES | SEARCH_SCOPES))))
        yield Live(runtime, fake, search, svc, db, settings)
    finally:
        await runtime.stop()
        await cloud.stop()


@pytest.fixture
async def live(settings: Settings, sqlite_db: Database) -> AsyncIterator[Live]:
    async for value in _live(settings, sqlite_db, bot_scopes=BOT_SCOPES | BOT_SEARCH_SCOPES):
        yield value


async def _dm_ask(live: Live, text: str, *, action_token: str | None) -> str:
    """Alice writes to askwith in her DM with it (Slack's event carries the action_token); returns the DM's id."""
    dm = live.fake.world.dm(live.fake.world.bot_id, "UALICE").id
    ts = live.fake.timeline.add(dm, "UALICE", text, None)
    event: dict[str, Any] = {"type": "message", "channel_type": "im", "channel": dm, "user": "UALICE", "text": text,
                             "ts": ts}  # fmt: skip
    if action_token:
        event["action_token"] = action_token
    response = await live.runtime.app.async_dispatch(bolt_request(SIGNING_SECRET, event_body(TEAM, event)))
    assert response.status == 200
    return dm


async def _until(condition: Callable[[], object], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def _count(db: Database, table: Any, workspace_id: int) -> int:
    async with db.session() as session:
        query = select(func.count()).select_from(table).where(table.c.workspace_id == workspace_id)
        return int((await session.execute(query)).scalar_one())


async def _answered(live: Live, dm: str, before: int) -> str:
    await _until(lambda: len([p for p in live.fake.posts(dm) if "Bluebird" in p or "14 March" in p]) > before)
    await live.svc.drain()
    return live.fake.posts(dm)[-1]


async def test_an_ask_is_answered_from_live_search_and_nothing_found_is_kept(live: Live) -> None:
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: any("14 March" in p for p in live.fake.posts(dm)))
    await live.svc.drain()
    answer = next(p for p in live.fake.posts(dm) if "14 March" in p)
    # Alice's private #alice-notes holds "Bluebird": the bot token searches public channels only (her own user token,
    # which she has not granted, would be needed), so her agent does not find it.
    assert "14 March" in answer and "Bluebird" not in answer
    # Alice's agent searched as Alice (bot token + her action token), Bob's as Bob (his own token).
    assert {(c["user"], c["token"]) for c in live.search.calls} == {("UALICE", "bot"), ("UBOB", "user")}
    assert {c["channel_types"] for c in live.search.calls if c["token"] == "bot"} == {"public_channel"}
    assert any(c["semantic"] is False for c in live.search.calls)
    workspace_id = live.svc.asks.workspace_id
    assert await _count(live.db, models.Message.__table__, workspace_id) == 0
    assert await _count(live.db, models.MemorySession.__table__, workspace_id) == 0
    index = VectorIndex.from_settings(live.settings)
    assert await index.count(workspace_id) == 0 and await index.windows().count(workspace_id) == 0
    # The transcript keeps the ids of what was shared, no text (test_slack_live_at_rest scans every table).
    record = await _record(live.db)
    assert "DDBOBERIN" in record and "14 March" not in record
    assert "shall we meet next week" not in record  # found by Bob's search, never passed on
    assert '"prompt": [{' not in record


async def _record(db: Database) -> str:
    async with db.session() as session:
        turns = (await session.execute(select(ask_models.Turn.data))).scalars().all()
        consensus = (await session.execute(select(ask_models.Consensus.data))).scalars().all()
        hits = (await session.execute(select(ask_models.MemoryQuery.hit_ids))).scalars().all()
    return json.dumps([turns, consensus, hits])


async def test_a_private_channel_never_appears_in_another_members_live_results(live: Live) -> None:
    search = live.svc.live_search
    assert search is not None
    alice_token = live.fake.grant_user_token("UALICE", SEARCH_SCOPES)
    tokens = UserTokenStore(live.db, TokenCipher.from_settings(live.settings))
    await tokens.save(UserTokenGrant("slack", TEAM, "UALICE", alice_token, tuple(sorted(SEARCH_SCOPES))))
    query = LiveQuery("project code name", semantic=False, limit=20)
    hearing_in("DALICE", public=False, dm=True)  # answered in Alice's DM with askwith: her own view, whole
    alice = [r.message.text for r in await search.search("UALICE", query)]
    assert any("Bluebird" in t for t in alice)  # her private #alice-notes, with her own user token
    bob = [r.message.text for r in await search.search("UBOB", query)]
    semantic = [r.message.text for r in await search.search("UBOB", LiveQuery("Bluebird code", True, 20))]
    assert not any("Bluebird" in t for t in bob + semantic)
    party = await search.search("UBOB", LiveQuery("launch party budget", True, 20))
    assert not any("party" in r.message.text for r in party)  # dave and erin's DM


async def test_an_answer_for_a_public_channel_searches_public_channels_only(live: Live) -> None:
    """Slack: "DON'T expose messages/files to anyone who would not have access to them in Slack." An answer posted in
    a public channel is searched, even with a member's own token, in public channels only (scoped to that channel)."""
    search = live.svc.live_search
    assert search is not None
    alice_token = live.fake.grant_user_token("UALICE", SEARCH_SCOPES)
    tokens = UserTokenStore(live.db, TokenCipher.from_settings(live.settings))
    await tokens.save(UserTokenGrant("slack", TEAM, "UALICE", alice_token, tuple(sorted(SEARCH_SCOPES))))
    general = live.fake.world.add_channel(Channel("CGENERAL", "general", ChannelKind.PUBLIC, ("UALICE", "UBOB"))).id
    hearing_in(general, public=True)
    found = [r.message.text for r in await search.search("UALICE", LiveQuery("project code name", False, 20))]
    assert not any("Bluebird" in t for t in found)  # her private #alice-notes stays out of a public answer
    assert live.search.calls[-1]["channel_types"] == "public_channel"
    assert live.search.calls[-1]["context_channel_id"] == general
    hearing_in("", public=False)  # a mention's channel type is unknown: narrowed the same way, no channel named
    await search.search("UALICE", LiveQuery("project code name", False, 20))
    assert live.search.calls[-1]["channel_types"] == "public_channel"


async def test_an_ask_started_from_a_mention_searches_colleagues_in_public_channels_only(live: Live) -> None:
    """Where an event's ask is answered travels with the ask's task (`spawn(..., audience=...)`, as the mention, DM
    and Assistant listeners start asks): from a DM with askwith Bob's own token searches his DMs too; from a mention
    (a channel, whose readers may be anyone there) or a public channel, public channels only."""
    search = live.svc.live_search
    assert search is not None
    world = live.fake.world
    query = LiveQuery("launch date", semantic=False, limit=20)
    dm = {"type": "message", "channel_type": "im", "channel": world.dm(world.bot_id, "UALICE").id, "user": "UALICE"}
    mention = {"type": "app_mention", "channel": "CTEAM", "user": "UALICE"}
    public = {"type": "message", "channel_type": "channel", "channel": "CTEAM", "user": "UALICE"}
    world.add_channel(Channel("CTEAM", "team", ChannelKind.PUBLIC, ("UALICE", "UBOB", world.bot_id)))
    found = {}
    for name, event in (("dm", dm), ("mention", mention), ("public", public)):
        await live.svc.spawn(search.search("UBOB", query), audience=live.svc.audience_of(event))
        found[name] = (live.search.calls[-1]["channel_types"], live.search.calls[-1].get("context_channel_id"))
    assert found["dm"][0] == "public_channel,private_channel,im,mpim"
    assert found["mention"] == ("public_channel", None)
    assert found["public"] == ("public_channel", "CTEAM")


async def test_an_expired_action_token_tells_the_member_plainly(live: Live) -> None:
    token = live.search.issue_action_token("UALICE")
    live.search.clock.advance(ACTION_TOKEN_TTL_S + 1)
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=token)
    await _until(lambda: any(texts.live_search_refused("expired") == p for p in live.fake.posts(dm)))
    await _until(lambda: any("14 March" in p for p in live.fake.posts(dm)))  # Bob's side still answered
    await live.svc.drain()


async def test_a_colleague_who_has_not_connected_is_told_so_before_the_ask(live: Live) -> None:
    dm = await _dm_ask(live, f"<@UERIN> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: live.fake.posts(dm))
    await live.svc.drain()
    assert live.fake.posts(dm) == [rejection_texts.not_connected("erin", requester=False)]
    assert not live.search.calls


async def test_a_workspace_guest_is_refused_before_anything_is_searched(live: Live) -> None:
    """ "Workspace guests are not permitted to access apps using platform AI features" (the Real-time Search guide)."""
    live.fake.guests.add("UALICE")
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: live.fake.posts(dm))
    await live.svc.drain()
    assert live.fake.posts(dm) == [texts.GUEST_REFUSED]
    assert not live.search.calls
    live.fake.guests.clear()  # a full member asks as before
    await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: len(live.fake.posts(dm)) > 1)
    await live.svc.drain()
    assert live.search.calls


@pytest.fixture
async def installed_before_search(settings: Settings, sqlite_db: Database) -> AsyncIterator[Live]:
    async for value in _live(settings, sqlite_db, bot_scopes=BOT_SCOPES):  # the install granted no search scope
        yield value


async def test_a_missing_search_scope_tells_the_member_plainly(installed_before_search: Live) -> None:
    live = installed_before_search
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: any(p.startswith("askwith could not search Slack") for p in live.fake.posts(dm)))
    told = next(p for p in live.fake.posts(dm) if p.startswith("askwith could not search Slack"))
    assert "missing a Slack search permission" in told and "search:read.public" in told, told
    await _until(lambda: any("14 March" in p for p in live.fake.posts(dm)))  # Bob's own token still searched
    await live.svc.drain()


async def test_a_retention_of_zero_days_keeps_no_transcript_after_the_answer(live: Live) -> None:
    assert live.svc.asks is not None
    live.svc.asks.settings = live.svc.asks.settings.replace(transcript_retention_days=0)  # changed while running
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _until(lambda: any("14 March" in p for p in live.fake.posts(dm)))
    await live.svc.drain()
    assert await _count(live.db, ask_models.Ask.__table__, live.svc.asks.workspace_id) == 0
    assert await _record(live.db) == "[[], [], []]"


async def test_the_action_token_of_a_members_message_reaches_every_process(live: Live) -> None:
    token = live.search.issue_action_token("UALICE")
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=token)
    await _until(lambda: any("14 March" in p for p in live.fake.posts(dm)))
    await live.svc.drain()
    # Another process on the database (an ask worker, or this one restarted): its own search finds Alice's token.
    assert live.svc.live_search is not None
    cipher = TokenCipher.from_settings(live.settings)
    other = SlackLiveSearch(live.svc.live_search.client, live.db, UserTokenStore(live.db, cipher), team_id=TEAM)
    assert await other.can_search("UALICE") and not await other.can_search("UERIN")
    async with live.db.session() as session:
        stored = (await session.execute(select(models.ActionToken.token_encrypted))).scalars().all()
    assert len(stored) == 1 and token not in stored[0] and cipher.decrypt(stored[0]) == token


async def _bobs_search(live: Live, words: str) -> list[Any]:
    """Bob searches with his own token, for an answer in his DM with askwith (his whole view)."""
    search = live.svc.live_search
    assert search is not None
    hearing_in("DBOB", public=False, dm=True)
    return await search.search("UBOB", LiveQuery(words, semantic=False, limit=20))


async def test_a_mention_in_a_live_result_reads_as_the_members_name(live: Live) -> None:
    """As the mirror stores a mention (`adapters.slack.convert.readable`): the roster's name beside the id."""
    general = live.fake.world.add_channel(Channel("CGENERAL", "general", ChannelKind.PUBLIC, ("UALICE", "UBOB"))).id
    live.fake.timeline.add(general, "UALICE", "<@UERIN> owns the rollout checklist", None)

    [hit] = await _bobs_search(live, "rollout checklist")

    assert hit.message.text == "@Erin (<@UERIN>) owns the rollout checklist"


async def test_the_agents_hidden_channel_never_appears_in_live_results(live: Live) -> None:
    agents = Channel("GAGENTS", "askwith-agents", ChannelKind.PRIVATE, ("UBOB", live.fake.world.bot_id))
    live.fake.timeline.add(live.fake.world.add_channel(agents).id, "UBOB", "agents talk: rollout budget 40k", None)
    general = live.fake.world.add_channel(Channel("CGENERAL", "general", ChannelKind.PUBLIC, ("UALICE", "UBOB"))).id
    live.fake.timeline.add(general, "UALICE", "the rollout budget is in the sheet", None)

    found = [r.message.text for r in await _bobs_search(live, "rollout budget")]

    assert found == ["the rollout budget is in the sheet"]


async def test_a_live_results_permalink_is_its_sources_link(live: Live) -> None:
    """The link Slack returned with a result opens it in the answer: no `chat.getPermalink` for it."""
    [hit] = await _bobs_search(live, "Tuesday works")
    asked = len(live.fake.calls_to("chat.getPermalink"))

    link = await live.svc.port.permalink(hit.message.channel_id, hit.message.id)

    assert link is not None and link.startswith("https://") and hit.message.channel_id in link
    assert len(live.fake.calls_to("chat.getPermalink")) == asked
