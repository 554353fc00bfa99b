"""Slack's documented refusals of `assistant.search.context`, as askwith takes them: live search marked unavailable
(`feature_not_enabled`, `assistant_search_context_disabled`), a refused grant never sent again
(`invalid_action_token`), malformed requests and the method's own HTTP 200 `rate_limited` mapped into askwith's
error tree; each refusal a member meets is told to them plainly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import texts
from adapters.slack.errors import platform_error
from adapters.slack.live_search import DISABLED_RETRY_S, SlackLiveSearch, hearing_in
from bot.errors import (
    LiveSearchGrantError,
    LiveSearchUnavailableError,
    PlatformRateLimitedError,
    PlatformRequestError,
)
from bot.memory.source import LiveQuery
from bot.store.db import Database
from tests.fakes.asks import two_fact_world
from tests.fakes.slack_api import BOT_SCOPES, FakeSlackApi
from tests.fakes.slack_search import BOT_SEARCH_SCOPES, FakeSlackSearch
from tests.fakes.slack_shapes import slack_world


QUERY = LiveQuery("launch date", semantic=False, limit=10)


@dataclass
class Refusals:
    fake: FakeSlackApi
    search: FakeSlackSearch
    live: SlackLiveSearch
    told: list[tuple[str, str]]
    now: list[float]


@pytest.fixture
async def refusals(sqlite_db: Database) -> AsyncIterator[Refusals]:
    fake = FakeSlackApi(slack_world(two_fact_world()), bot_scopes=BOT_SCOPES | BOT_SEARCH_SCOPES)
    search = FakeSlackSearch.install(fake)
    await fake.start()
    told: list[tuple[str, str]] = []
    now = [0.0]

    async def notify(member: str, text: str) -> None:
        told.append((member, text))

    client = AsyncWebClient(token=fake.bot_token, base_url=fake.base_url)
    live = SlackLiveSearch(client, sqlite_db, None, team_id=fake.world.id, notify=notify, clock=lambda: now[0])
    await live.remember_action_token("UALICE", search.issue_action_token("UALICE"))
    hearing_in("DALICE", public=False, dm=True)
    try:
        yield Refusals(fake, search, live, told, now)
    finally:
        await fake.stop()


def _sent(r: Refusals) -> int:
    return len(r.fake.calls_to("assistant.search.context"))


async def test_feature_not_enabled_marks_live_search_unavailable_and_says_so(refusals: Refusals) -> None:
    r = refusals
    r.search.unavailable = "feature_not_enabled"
    with pytest.raises(LiveSearchUnavailableError):
        await r.live.search("UALICE", QUERY)
    assert not r.live.available
    assert r.told == [("UALICE", texts.live_search_refused("unavailable"))]
    sent = _sent(r)
    with pytest.raises(LiveSearchUnavailableError):
        await r.live.search("UALICE", QUERY)
    assert _sent(r) == sent  # nothing more is sent to Slack
    r.now[0] += 10 * DISABLED_RETRY_S
    assert not r.live.available  # for good: the feature is not available on the workspace


async def test_a_disabled_search_is_tried_again_after_a_while(refusals: Refusals) -> None:
    r = refusals
    r.search.unavailable = "assistant_search_context_disabled"  # "Please wait and try again."
    with pytest.raises(LiveSearchUnavailableError):
        await r.live.search("UALICE", QUERY)
    assert not r.live.available
    r.search.unavailable = None
    r.now[0] += DISABLED_RETRY_S
    assert r.live.available
    await r.live.search("UALICE", QUERY)
    assert _sent(r) == 2  # searched again once the wait was over


async def test_a_refused_action_token_ends_that_grants_searches(refusals: Refusals) -> None:
    r = refusals
    r.search.clock.advance(3600)  # the grant is stale at Slack
    with pytest.raises(LiveSearchGrantError):
        await r.live.search("UALICE", QUERY)
    assert r.told == [("UALICE", texts.live_search_refused("expired"))]
    assert "Mention me again" in r.told[0][1]
    sent = _sent(r)
    with pytest.raises(LiveSearchGrantError):
        await r.live.search("UALICE", QUERY)
    assert _sent(r) == sent  # the refused grant is not sent again
    assert await r.live.can_search("UALICE") is False


async def test_malformed_searches_and_an_in_body_rate_limit_map_into_the_error_tree(refusals: Refusals) -> None:
    r = refusals
    with pytest.raises(PlatformRequestError, match="missing_query"):
        await r.live.search("UALICE", LiveQuery("   ", False, 10))
    r.search.max_query_chars = 5
    with pytest.raises(PlatformRequestError, match="query_too_long"):
        await r.live.search("UALICE", QUERY)
    r.search.max_query_chars = 1000
    r.search.per_minute, r.search.rate_limited_in_body = 0, True
    with pytest.raises(PlatformRateLimitedError, match="rate_limited"):
        await r.live.search("UALICE", QUERY)  # an HTTP 200 body, not a 429
    client = AsyncWebClient(token=r.fake.bot_token, base_url=r.fake.base_url)
    r.search.per_minute = 20
    token = r.search.issue_action_token("UALICE")
    with pytest.raises(SlackApiError) as refused:
        await client.assistant_search_context(query="launch", action_token=token, cursor="bogus")
    assert isinstance(platform_error("assistant.search.context", refused.value), PlatformRequestError)
