"""A member reads deadlines in their own time zone: Slack's `tz` from the user object mirrored onto the member, or
the zone they pick with `/askwith timezone`, else the workspace's (`ASKWITH_TIMEZONE`)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable

import pytest

from adapters.slack.port import SlackPort
from adapters.slack.services import SlackServices
from bot.asks.service import AskService
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.platform.port import SharePolicy
from bot.store.chat_store import WorkspaceKey
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from bot.texts import settings_texts
from tests.fakes.asks import QUESTION, two_fact_world
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import Slack, ack_text


WORKSPACE_ZONE = "Europe/Paris"


@pytest.fixture
def world() -> World:
    """Bob's Slack profile is set to Los Angeles; nobody else's names a zone."""
    source = two_fact_world()
    source.members["bob"] = dataclasses.replace(source.members["bob"], time_zone="America/Los_Angeles")
    return slack_world(source)


@pytest.fixture
async def asks(
    services: SlackServices, fake_slack: FakeSlackApi, user_tokens: UserTokenStore, world: World
) -> SlackServices:
    """Alice, Bob and Erin opted in, Bob asks before sharing, history ingested, the core on a Paris workspace."""
    await user_tokens.save(UserTokenGrant("slack", world.id, "UBOB", fake_slack.grant_user_token("UBOB"), ()))
    await services.ingest.mirror()
    key = WorkspaceKey("slack", world.id)
    for member in ("UALICE", "UBOB", "UERIN"):
        await services.member_settings.set_opted_in(key, member, True)
    await services.member_settings.set_share_policy(key, "UBOB", SharePolicy.ASK)
    await services.ingest.run()
    services.settings = services.settings.replace(timezone=WORKSPACE_ZONE)
    services.asks = AskService(
        settings=services.settings.replace(approval_timeout_seconds=10.0),
        db=services.db,
        port=services.port,
        llm=LLMClient.from_settings(services.settings, backend=ScriptedBackend(scripted_model)),
        memory=MemoryAccess(clear=ClearMemory(services.db), fuzzy=None),
        workspace_id=services.ingest.workspace_id,
    )
    return services


async def _until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def _card_text(slack: Slack, fake_slack: FakeSlackApi) -> str:
    """The words of the approval card Bob gets by DM when Alice asks him."""
    await slack.command("UALICE", "/ask-with", f"<@UBOB|bob> {QUESTION}")
    bob_dm = fake_slack.world.dm(fake_slack.world.bot_id, "UBOB").id
    await _until(lambda: any(dm == bob_dm for dm, _ in fake_slack.blocks))
    rendered = next(v for k, v in fake_slack.blocks.items() if k[0] == bob_dm)
    return str(rendered)


async def test_users_info_carries_the_zone_of_the_profile_as_slack_does(port: SlackPort) -> None:
    user = (await port.client.users_info(user="UBOB"))["user"]
    assert user["tz"] == "America/Los_Angeles" and user["tz_offset"] in (-28800, -25200) and user["tz_label"]
    assert "tz" not in (await port.client.users_info(user="UALICE"))["user"]


async def test_a_member_with_a_slack_time_zone_reads_the_deadline_in_it(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    card = await _card_text(slack, fake_slack)
    assert "Answer by" in card and "America/Los_Angeles time" in card, card
    assert WORKSPACE_ZONE not in card


async def test_the_zone_a_member_picks_wins_over_the_profile_and_auto_goes_back(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    shown = ack_text(await slack.command("UBOB", "/askwith", "timezone"))
    assert "America/Los_Angeles (your profile's" in shown
    saved = ack_text(await slack.command("UBOB", "/askwith", "timezone asia/tokyo"))
    assert saved.startswith("Saved.") and "Asia/Tokyo (you chose it" in saved
    # a mirror refreshes the profile's zone, never the member's choice
    await asks.ingest.mirror()
    settings = await asks.member_settings.get(WorkspaceKey("slack", fake_slack.world.id), "UBOB")
    assert (settings.time_zone, settings.platform_time_zone) == ("Asia/Tokyo", "America/Los_Angeles")
    card = await _card_text(slack, fake_slack)
    assert "Asia/Tokyo time" in card and "America/Los_Angeles" not in card, card
    back = ack_text(await slack.command("UBOB", "/askwith", "timezone auto"))
    assert "America/Los_Angeles (your profile's" in back


async def test_an_unknown_zone_is_refused_with_the_closest_one_and_nothing_changes(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    refused = ack_text(await slack.command("UALICE", "/askwith", "timezone Europe/Pari"))
    assert "not a time zone" in refused and "Did you mean Europe/Paris?" in refused
    shown = ack_text(await slack.command("UALICE", "/askwith", "timezone"))
    assert (
        shown
        == f"*Your time zone* for deadlines and times: {settings_texts.time_zone_state(None, None, WORKSPACE_ZONE)}"
    )
