"""Every Slack Web API call askwith makes, checked against Slack's published method table (`tests.fakes.slack_methods`:
token types, scopes, arguments, page caps), and the scopes each install flow asks for checked against the token types
Slack allows them for. Runs askwith's own paths: a live ask in a Marketplace workspace, the mirror's ingestion, a
member's connect link."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from urllib.parse import parse_qs, urlparse

import pytest

from adapters.slack.live_search import SEARCH_USER_SCOPES
from adapters.slack.memory_source import member_scopes
from adapters.slack.oauth_app import install_scopes
from adapters.slack.services import SlackServices
from bot.asks.service import AskService
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.platform.port import Channel, ChannelKind
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from tests.fakes.asks import QUESTION, two_fact_world
from tests.fakes.slack_api import ApiCall, FakeSlackApi
from tests.fakes.slack_methods import BOT, METHODS, USER, scope_problems, search_problems
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import Slack
from tests.integration.slack.test_slack_live_search import Live, _answered, _dm_ask
from tests.integration.slack.test_slack_live_search import live as live  # noqa: F401 - the fixture, shared


def _violations(calls: list[ApiCall]) -> list[str]:
    found = []
    for call in calls:
        spec = METHODS.get(call.method)
        if spec is None:
            found.append(f"{call.method}: not in the method table")
            continue
        problems = spec.problems(call.token_kind, call.params)
        if call.method == "assistant.search.context":
            problems += search_problems(call.token_kind, call.params)
        found += [f"{call.method}: {p}" for p in problems]
    return found


@pytest.mark.parametrize("mode", ["live", "mirror"])
def test_each_install_asks_for_scopes_the_token_types_allow(settings: Settings, mode: str) -> None:
    app = "marketplace" if mode == "live" else "internal"
    chosen = settings.replace(slack_app=app, slack_memory=mode, slack_distribution="oauth")
    assert scope_problems(BOT, install_scopes(chosen)) == []
    assert scope_problems(USER, member_scopes(chosen)) == []
    if mode == "live":  # the bot holds public search only; a member grants the private, IM and MPIM ones
        assert [s for s in install_scopes(chosen) if s.startswith("search:")] == ["search:read.public"]
        assert set(member_scopes(chosen)) == set(SEARCH_USER_SCOPES)


async def test_a_live_ask_calls_slack_as_slack_documents(live: Live) -> None:
    before = len(live.fake.posts("DUALICE")) if "DUALICE" in live.fake.world.channels else 0
    dm = await _dm_ask(live, f"<@UBOB> {QUESTION}", action_token=live.search.issue_action_token("UALICE"))
    await _answered(live, dm, before)
    searches = live.fake.calls_to("assistant.search.context")
    assert {c.token_kind for c in searches} == {BOT, USER}  # Alice through the bot's token, Bob through his own
    # the bot's searches: the asker's action token, public channels only
    assert all(c.params["channel_types"] == "public_channel" and c.params["action_token"] for c in searches
               if c.token_kind == BOT)  # fmt: skip
    assert _violations(live.fake.calls) == []


async def test_a_bot_token_asking_for_private_conversations_is_refused_as_slack_refuses_it(live: Live) -> None:
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(token=live.fake.bot_token, base_url=live.fake.base_url)
    token = live.search.issue_action_token("UALICE")
    for kind in ("private_channel", "im", "mpim"):
        with pytest.raises(SlackApiError) as refused:
            await client.assistant_search_context(query="launch", action_token=token, channel_types=[kind])
        assert refused.value.response["error"] == "missing_scope"
        assert refused.value.response["needed"] == f"search:read.{'private' if kind == 'private_channel' else kind}"
    with pytest.raises(SlackApiError) as refused:
        await client.assistant_search_context(query="", action_token=token)
    assert refused.value.response["error"] == "missing_query"
    with pytest.raises(SlackApiError) as refused:
        await client.assistant_search_context(query="launch", action_token="1.2.3")
    assert refused.value.response["error"] == "invalid_action_token"
    with pytest.raises(SlackApiError) as refused:
        await client.assistant_search_context(query="x" * (live.search.max_query_chars + 1), action_token=token)
    assert refused.value.response["error"] == "query_too_long"
    with pytest.raises(ValueError, match="search:read.im"):
        FakeSlackApi(live.fake.world, bot_scopes=frozenset({"search:read.public", "search:read.im"}))


@pytest.fixture
def world() -> World:
    world = slack_world(two_fact_world())
    world.add_channel(Channel("CTEAM", "team", ChannelKind.PUBLIC, ("UALICE", "UBOB", world.bot_id)))
    return world


@pytest.fixture
async def mirrored(services: SlackServices, fake_slack: FakeSlackApi, user_tokens: UserTokenStore) -> AsyncIterator:
    world = fake_slack.world
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", fake_slack.grant_user_token("UALICE"), ()))
    await services.ingest.mirror()
    for member in ("UALICE", "UBOB"):
        await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), member, True)
    await services.ingest.run()
    llm = LLMClient.from_settings(services.settings, backend=ScriptedBackend(scripted_model))
    services.asks = AskService(
        settings=services.settings, db=services.db, port=services.port, llm=llm,
        memory=MemoryAccess(clear=ClearMemory(services.db), fuzzy=None), workspace_id=services.ingest.workspace_id,
    )  # fmt: skip
    yield services


async def test_the_mirror_and_a_connect_link_call_slack_as_slack_documents(
    mirrored: SlackServices, fake_slack: FakeSlackApi
) -> None:
    assert fake_slack.calls_to("conversations.history") and fake_slack.calls_to("users.list")
    assert _violations(fake_slack.calls) == []
    assert mirrored.install is not None
    link = urlparse(mirrored.install.authorize_url())
    asked = parse_qs(link.query)
    assert scope_problems(USER, asked.get("user_scope", [""])[0].split(",")) == []
    assert asked.get("scope", [""])[0] == ""  # a member's link asks for no bot scope


async def test_a_mention_ask_and_the_app_home_call_slack_as_slack_documents(
    mirrored: SlackServices, fake_slack: FakeSlackApi, slack: Slack
) -> None:
    text = f"<@{fake_slack.world.bot_id}> ask <@UBOB|bob>, {QUESTION}"
    ts = fake_slack.timeline.add("CTEAM", "UALICE", text, None)
    await slack.event({"type": "app_mention", "user": "UALICE", "text": text, "ts": ts, "channel": "CTEAM"})
    await slack.event({"type": "app_home_opened", "user": "UALICE", "tab": "home", "channel": "DHOME"})
    await _until(lambda: fake_slack.home_views and len(fake_slack.calls_to("chat.update")) >= 2)
    await mirrored.drain()
    assert fake_slack.calls_to("chat.postMessage") and fake_slack.calls_to("views.publish")
    assert _violations(fake_slack.calls) == []


async def _until(condition: Callable[[], object], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)
