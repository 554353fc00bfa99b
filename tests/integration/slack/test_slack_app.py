"""The real bolt AsyncApp, driven with signed requests through `async_dispatch`; Web API calls go to the fake."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import pytest
from slack_bolt.adapter.socket_mode.async_internals import run_async_bolt_app
from slack_bolt.async_app import AsyncBoltRequest
from slack_sdk.socket_mode.request import SocketModeRequest

from adapters.slack import texts
from adapters.slack.app import build_app
from adapters.slack.blocks import APPROVE_ACTION, APPROVE_ALL_ACTION, DENY_ACTION
from adapters.slack.services import SlackServices
from bot.consent.pending import ApprovalStore
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.store.chat_store import WorkspaceKey
from bot.store.world import World
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_requests import command_body, signature
from tests.integration.slack.conftest import SIGNING_SECRET, Slack, ack_text


# ---------------------------------------------------------------------- request verification
async def test_a_correctly_signed_request_is_served(slack: Slack) -> None:
    assert ack_text(await slack.command("UALICE", "/ask-with", "help")) == texts.ASK_HELP


async def test_a_forged_signature_is_rejected_with_401(slack: Slack, world: World) -> None:
    body = command_body(world.id, "UALICE", "/ask-with", "help")
    forged = await slack.app.async_dispatch(
        _request(body, {"x-slack-signature": signature("not-the-secret", str(int(time.time())), body)})
    )
    assert forged.status == 401


async def test_a_tampered_body_is_rejected_with_401(slack: Slack, world: World) -> None:
    body = command_body(world.id, "UALICE", "/ask-with", "help")
    ts = str(int(time.time()))
    tampered = body.replace("UALICE", "UBOB")
    response = await slack.app.async_dispatch(
        _request(tampered, {"x-slack-signature": signature(SIGNING_SECRET, ts, body), "x-slack-request-timestamp": ts})
    )
    assert response.status == 401


async def test_a_timestamp_older_than_five_minutes_is_rejected_with_401(slack: Slack, world: World) -> None:
    body = command_body(world.id, "UALICE", "/ask-with", "help")
    old = await slack.command("UALICE", "/ask-with", "help", timestamp=int(time.time()) - 6 * 60)
    assert old.status == 401
    recent = await slack.command("UALICE", "/ask-with", "help", timestamp=int(time.time()) - 4 * 60)
    assert recent.status == 200 and body


def _request(body: str, headers: dict[str, str]) -> AsyncBoltRequest:
    base = {"x-slack-request-timestamp": str(int(time.time())), "content-type": "application/x-www-form-urlencoded"}
    return AsyncBoltRequest(body=body, headers={**base, **headers})


# ---------------------------------------------------------------------- /askwith settings
async def test_member_settings_round_trip(slack: Slack, services: SlackServices, world: World) -> None:
    await services.ingest.mirror()
    shown = ack_text(await slack.command("UBOB", "/askwith", ""))
    assert "memory: off" in shown and "sharing: `auto`" in shown and "excluded channels: none" in shown
    assert "memory: on" in ack_text(await slack.command("UBOB", "/askwith", "on"))
    assert "sharing: `ask`" in ack_text(await slack.command("UBOB", "/askwith", "share ask"))
    excluded = ack_text(await slack.command("UBOB", "/askwith", "exclude <#GCLAUNCH|launch-team>"))
    assert "excluded channels: <#GCLAUNCH>" in excluded
    stored = await services.member_settings.get(WorkspaceKey("slack", world.id), "UBOB")
    assert (stored.opted_in, stored.share, stored.excluded_channels) == (True, SharePolicy.ASK, ("GCLAUNCH",))
    assert "excluded channels: none" in ack_text(await slack.command("UBOB", "/askwith", "include <#GCLAUNCH>"))
    assert "memory: off" in ack_text(await slack.command("UBOB", "/askwith", "off"))


async def test_member_settings_errors_say_what_went_wrong(slack: Slack, services: SlackServices) -> None:
    assert ack_text(await slack.command("UBOB", "/askwith", "")) == texts.settings_not_synced()
    await services.ingest.mirror()
    assert ack_text(await slack.command("UBOB", "/askwith", "share sometimes")) == texts.settings_usage_error(
        "share sometimes"
    )
    assert ack_text(await slack.command("UBOB", "/askwith", "exclude <#CNOPE>")) == texts.unknown_channel_setting(
        "<#CNOPE>"
    )
    assert ack_text(await slack.command("UBOB", "/askwith", "help")) == texts.SETTINGS_HELP


# ---------------------------------------------------------------------- live message events
async def test_message_events_go_into_memory_except_the_bots_own(
    slack: Slack, services: SlackServices, world: World
) -> None:
    await services.ingest.mirror()
    await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), "UALICE", True)
    said = {"type": "message", "channel": "CCGENERAL", "user": "UALICE", "text": "lunch at noon", "ts": "1800.0001"}
    bot = {**said, "user": world.bot_id, "bot_id": "B0ASKWITH", "text": "askwith says hi", "ts": "1800.0002"}
    joined = {**said, "subtype": "channel_join", "text": "<@UALICE> has joined", "ts": "1800.0003"}
    for event in (said, bot, joined):
        assert (await slack.event(event)).status == 200
    await services.drain()
    assert await _stored_texts(services) == ["lunch at noon"]


async def test_a_redelivered_event_is_acknowledged_and_dropped(slack: Slack, services: SlackServices) -> None:
    from tests.fakes.slack_requests import event_body

    body = event_body("TACME", {"type": "message", "channel": "CCGENERAL", "user": "UALICE", "text": "x", "ts": "1.1"})
    first = await slack.send(body)
    again = await slack.send(body, retry=1)
    assert first.status == again.status == 200
    await services.drain()
    assert not await services.deliveries.first_time("slack", "event:TACME:" + json.loads(body)["event_id"])


async def _stored_texts(services: SlackServices) -> list[str]:
    from sqlalchemy import select

    from bot.store import models

    async with services.db.session() as session:
        return list((await session.execute(select(models.Message.text).order_by(models.Message.id))).scalars())


# ---------------------------------------------------------------------- approvals
async def test_approve_click_resolves_the_waiting_ask_and_closes_the_prompt(
    slack: Slack, services: SlackServices, fake_slack: FakeSlackApi
) -> None:
    request = ApprovalRequest("appr-1", "UBOB", "Share with Alice's agent?", "Thursday I'm at the dentist")
    waiting = asyncio.create_task(services.port.request_approval(request, timeout_s=10))
    dm, ts = await _prompt(fake_slack, "UBOB")
    buttons = fake_slack.blocks[(dm, ts)][-1]["elements"]
    expected = [(APPROVE_ACTION, "appr-1"), (DENY_ACTION, "appr-1"), (APPROVE_ALL_ACTION, "appr-1")]
    assert [(b["action_id"], b["value"]) for b in buttons] == expected
    assert (await slack.click("UBOB", dm, APPROVE_ACTION, "appr-1")).status == 200
    assert await asyncio.wait_for(waiting, 5) == ApprovalDecision.APPROVED
    await _until(lambda: fake_slack.calls_to("chat.update"))
    assert fake_slack.timeline.find(dm, ts).text == texts.approval_outcome(request, ApprovalDecision.APPROVED)
    assert fake_slack.blocks[(dm, ts)] and "actions" not in json.dumps(fake_slack.blocks[(dm, ts)])
    # A second click on the (already closed) prompt changes nothing and says so.
    await slack.click("UBOB", dm, DENY_ACTION, "appr-1")
    await _until(lambda: fake_slack.responses)
    assert fake_slack.responses[-1]["text"] == texts.approval_not_pending()


async def test_only_the_member_asked_can_answer_and_deny_is_delivered(
    slack: Slack, services: SlackServices, fake_slack: FakeSlackApi
) -> None:
    request = ApprovalRequest("appr-2", "UBOB", "Share with Alice's agent?", "the dentist")
    waiting = asyncio.create_task(services.port.request_approval(request, timeout_s=10))
    dm, _ = await _prompt(fake_slack, "UBOB")
    await slack.click("UALICE", dm, APPROVE_ACTION, "appr-2")
    await _until(lambda: fake_slack.responses)
    assert fake_slack.responses[-1]["text"] == texts.approval_not_yours()
    assert not waiting.done()
    await slack.click("UBOB", dm, DENY_ACTION, "appr-2")
    assert await asyncio.wait_for(waiting, 5) == ApprovalDecision.DENIED


async def test_approve_all_is_its_own_decision_and_the_prompt_says_what_it_means(
    slack: Slack, services: SlackServices, fake_slack: FakeSlackApi
) -> None:
    context = {"audience": "alice and everyone in #launch", "question": "When is the launch?"}
    request = ApprovalRequest("appr-all", "UBOB", "Share this?", "the launch date", context=context)
    waiting = asyncio.create_task(services.port.request_approval(request, timeout_s=10))
    dm, ts = await _prompt(fake_slack, "UBOB")
    await slack.click("UBOB", dm, APPROVE_ALL_ACTION, "appr-all")
    assert await asyncio.wait_for(waiting, 5) == ApprovalDecision.APPROVED_ALL
    await _until(lambda: fake_slack.calls_to("chat.update"))
    closed = fake_slack.timeline.find(dm, ts).text
    assert "everything else it says in this ask" in closed and "alice and everyone in #launch" in closed


async def test_a_click_on_a_prompt_another_process_posted_is_stored_for_the_ask(
    slack: Slack, services: SlackServices, fake_slack: FakeSlackApi
) -> None:
    """The prompt was posted by another worker (or before a restart): this process holds no prompt, yet the click
    is stored, where the waiting ask (whichever process runs it) reads it, and the prompt shows the outcome."""
    store = ApprovalStore(services.db)
    request = ApprovalRequest("appr-elsewhere", "UBOB", "Share with Alice's agent?", "the dentist")
    await store.open(request, ask_id=None, timeout_s=60)
    assert services.port.approvals.pending("appr-elsewhere") is None
    await slack.click("UALICE", "D-bob", APPROVE_ACTION, "appr-elsewhere")
    await _until(lambda: fake_slack.responses)
    assert fake_slack.responses[-1]["text"] == texts.approval_not_yours()
    assert (await store.get("appr-elsewhere")).status == "pending"
    await slack.click("UBOB", "D-bob", APPROVE_ACTION, "appr-elsewhere")
    await _until(lambda: len(fake_slack.responses) >= 2)
    assert fake_slack.responses[-1]["text"] == texts.approval_recorded(ApprovalDecision.APPROVED)
    assert await store.wait("appr-elsewhere", poll_s=0.05) == ApprovalDecision.APPROVED
    # a late second click changes nothing
    await slack.click("UBOB", "D-bob", DENY_ACTION, "appr-elsewhere")
    await _until(lambda: len(fake_slack.responses) >= 3)
    assert fake_slack.responses[-1]["text"] == texts.approval_not_pending()
    assert (await store.get("appr-elsewhere")).status == "approved"


async def test_an_unanswered_prompt_times_out_and_says_so(services: SlackServices, fake_slack: FakeSlackApi) -> None:
    request = ApprovalRequest("appr-3", "UCAROL", "Share with Alice's agent?", "room 4B")
    assert await services.port.request_approval(request, timeout_s=0.2) == ApprovalDecision.TIMEOUT
    dm, ts = await _prompt(fake_slack, "UCAROL")
    assert fake_slack.timeline.find(dm, ts).text == texts.approval_outcome(request, ApprovalDecision.TIMEOUT)
    # The same approval asked again (a resumed ask) does not prompt twice.
    assert await services.port.request_approval(request, timeout_s=5) == ApprovalDecision.TIMEOUT
    assert len(fake_slack.posts(dm)) == 1


async def _prompt(fake_slack: FakeSlackApi, member: str) -> tuple[str, str]:
    await _until(lambda: fake_slack.calls_to("chat.postMessage"))
    dm = fake_slack.calls_to("chat.postMessage")[-1].params["channel"]
    message = fake_slack.timeline.messages(dm)[-1]
    return dm, fake_slack.timeline.message_json(message)["ts"]


async def _until(condition, timeout: float = 5.0) -> None:  # noqa: ANN001 - any callable
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


# ---------------------------------------------------------------------- Socket Mode
async def test_socket_mode_delivers_the_same_command_without_signatures(services: SlackServices) -> None:
    """Socket Mode frames arrive over an authenticated socket: no signing secret needed, same listeners."""
    socket_services = dataclasses.replace(services, settings=services.settings.replace(slack_signing_secret=""))
    app = build_app(socket_services, socket_mode=True)
    payload = {
        "command": "/ask-with",
        "text": "help",
        "user_id": "UALICE",
        "team_id": "TACME",
        "channel_id": "CCGENERAL",
        "trigger_id": "sm-1",
    }
    frame = SocketModeRequest(type="slash_commands", envelope_id="e1", payload=payload)
    response = await run_async_bolt_app(app, frame)
    assert response.status == 200 and json.loads(response.body)["text"] == texts.ASK_HELP


async def test_oauth_credentials_in_the_environment_do_not_switch_bolt_to_its_own_oauth(
    services: SlackServices, fake_slack: FakeSlackApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_CLIENT_ID", fake_slack.client_id)
    monkeypatch.setenv("SLACK_CLIENT_SECRET", fake_slack.client_secret)
    slack = Slack(build_app(services), fake_slack)
    assert ack_text(await slack.command("UALICE", "/ask-with", "help")) == texts.ASK_HELP
