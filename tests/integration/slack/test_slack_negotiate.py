"""`/negotiate @bob` end to end: a signed command into the real bolt app, the core's member negotiation played by
the scripted negotiators, both members' Accept / Decline prompts and the outcome checked in the fake Slack API."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from adapters.slack import texts
from adapters.slack.blocks import APPROVE_ACTION, DENY_ACTION
from adapters.slack.services import SlackServices
from bot.negotiation import messages
from bot.texts import rejection_texts
from tests.fakes.slack_api import FakeSlackApi
from tests.integration.slack.conftest import Slack, ack_text
from tests.negotiation_helpers import holdings, load_sample_profiles, scripted_negotiators


@pytest.fixture
async def negotiating(services: SlackServices) -> SlackServices:
    """The members mirrored, alice's and bob's profiles loaded, the scripted negotiators playing their agents."""
    await services.ingest.mirror()
    await load_sample_profiles(services.db, services.port)
    services.negotiation_clients = scripted_negotiators
    services.settings = services.settings.replace(negotiation_approval_timeout_seconds=10.0)
    return services


async def _until(condition: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)
    return found


def _dm(fake: FakeSlackApi, member: str) -> str:
    return fake.world.dm(fake.world.bot_id, member).id


async def _prompts(fake: FakeSlackApi) -> dict[str, list[dict[str, Any]]]:
    """Each member's Accept / Decline buttons, once both prompts are posted."""
    dms = {member: _dm(fake, member) for member in ("UALICE", "UBOB")}

    def both() -> dict[str, list[dict[str, Any]]] | None:
        found = {m: blocks[-1]["elements"] for (dm, _), blocks in fake.blocks.items() for m in dms if dm == dms[m]}
        return found if len(found) == 2 else None

    return await _until(both)


async def _negotiate_and_answer(slack: Slack, svc: SlackServices, fake: FakeSlackApi, bob_action: str) -> None:
    assert ack_text(await slack.command("UALICE", "/negotiate", "<@UBOB|bob>")) == texts.negotiating("<@UBOB>")
    prompts = await _prompts(fake)
    for member, buttons in prompts.items():
        assert [b["text"]["text"] for b in buttons] == ["Accept", "Decline"]
        assert fake.posts(_dm(fake, member))[0].startswith("Accept the task trade your agent agreed with")
    await slack.click("UALICE", _dm(fake, "UALICE"), APPROVE_ACTION, prompts["UALICE"][0]["value"])
    await slack.click("UBOB", _dm(fake, "UBOB"), bob_action, prompts["UBOB"][0]["value"])
    await svc.drain()


async def test_both_accept_and_the_tasks_move(
    slack: Slack, negotiating: SlackServices, fake_slack: FakeSlackApi
) -> None:
    before = await holdings(negotiating.db, negotiating.port, "alice", "bob")
    await _negotiate_and_answer(slack, negotiating, fake_slack, APPROVE_ACTION)
    after = await holdings(negotiating.db, negotiating.port, "alice", "bob")
    assert after != before and sorted(after["alice"] + after["bob"]) == sorted(before["alice"] + before["bob"])
    assert fake_slack.posts(_dm(fake_slack, "UALICE"))[-1] == messages.trade_confirmed("bob")
    assert fake_slack.posts(_dm(fake_slack, "UBOB"))[-1] == messages.trade_confirmed("alice")


async def test_a_decline_leaves_the_tasks_where_they_were(
    slack: Slack, negotiating: SlackServices, fake_slack: FakeSlackApi
) -> None:
    before = await holdings(negotiating.db, negotiating.port, "alice", "bob")
    await _negotiate_and_answer(slack, negotiating, fake_slack, DENY_ACTION)
    assert await holdings(negotiating.db, negotiating.port, "alice", "bob") == before
    assert fake_slack.posts(_dm(fake_slack, "UALICE"))[-1] == messages.trade_declined("bob")
    assert fake_slack.posts(_dm(fake_slack, "UBOB"))[-1] == messages.trade_declined("alice")
    closed = fake_slack.timeline.messages(_dm(fake_slack, "UBOB"))[0].text
    assert closed.startswith(":no_entry_sign: You declined: Accept the task trade")


@pytest.mark.parametrize(
    ("member", "text", "expected"),
    [
        ("UALICE", "", texts.NEGOTIATE_HELP),
        ("UALICE", "help", texts.NEGOTIATE_HELP),
        ("UALICE", "bob", messages.no_counterpart()),
        ("UALICE", "<@UBOB|bob> <@UCAROL|carol>", messages.one_counterpart_only()),
        ("UALICE", "<@UBOB|bob> today", texts.negotiate_usage_error("<@UBOB|bob> today")),
        ("UALICE", "@nobody", rejection_texts.unknown_member("nobody")),
        ("UALICE", "<@UASKWITHBOT|askwith>", messages.counterpart_is_bot("askwith")),
        ("UALICE", "<@UALICE|alice>", messages.counterpart_is_yourself()),
        ("UALICE", "<@UCAROL|carol>", messages.their_profile_missing("carol")),
        ("UCAROL", "<@UBOB|bob>", messages.your_profile_missing()),
    ],
)
async def test_every_refusal_tells_the_member_why(
    slack: Slack, negotiating: SlackServices, fake_slack: FakeSlackApi, member: str, text: str, expected: str
) -> None:
    assert ack_text(await slack.command(member, "/negotiate", text)) == expected
    await negotiating.drain()
    assert not fake_slack.calls_to("chat.postMessage")  # nothing ran
