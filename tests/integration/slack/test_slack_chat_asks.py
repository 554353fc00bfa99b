"""Asking where you are, end to end: events and clicks signed into the real bolt app, the real core with a scripted
model, and every post checked where it lands in the fake Slack Web API — the status message and its updates, the
rich answer's blocks, who can see it."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from adapters.slack import texts
from adapters.slack.answer_blocks import CANCEL_ACTION, GROUP_CANCEL_ACTION, GROUP_CONFIRM_ACTION, VOTE_UP_ACTION
from adapters.slack.services import SlackServices
from adapters.slack.thread_ask import MODAL, SHORTCUT, thread_ask_modal
from bot.asks.feedback import vote_of
from bot.asks.service import AskService
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.platform.port import Channel, ChannelKind
from bot.store.chat_store import WorkspaceKey
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from bot.texts import follow_up_texts, progress_texts, rejection_texts, transcript_texts
from tests.fakes.asks import QUESTION, two_fact_world
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_requests import message_shortcut_body, view_submission_body
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import Slack, ack_text


BOT = "UASKWITHBOT"
TEAM = "CTEAM"  # alice, bob, carol and the bot
QUIET = "CQUIET"  # alice and bob, without the bot
ASK_BOB = f"<@{BOT}> ask <@UBOB|bob>, {QUESTION}"


@pytest.fixture
def world() -> World:
    world = slack_world(two_fact_world())
    world.add_channel(Channel(TEAM, "team", ChannelKind.PUBLIC, ("UALICE", "UBOB", "UCAROL", BOT)))
    world.add_channel(Channel(QUIET, "quiet", ChannelKind.PUBLIC, ("UALICE", "UBOB")))
    return world


def _asks(services: SlackServices, *, latency_s: float) -> AskService:
    llm = LLMClient.from_settings(services.settings, backend=ScriptedBackend(scripted_model, latency_s=latency_s))
    return AskService(
        settings=services.settings,
        db=services.db,
        port=services.port,
        llm=llm,
        memory=MemoryAccess(clear=ClearMemory(services.db), fuzzy=None),
        workspace_id=services.ingest.workspace_id,
    )


@pytest.fixture
async def asks(
    services: SlackServices, world: World, fake_slack: FakeSlackApi, user_tokens: UserTokenStore
) -> SlackServices:
    """Alice, Bob and Erin opted in, history ingested, the core wired in with a model that takes a little while
    per call (so the stages are seen), and status updates allowed every 50 ms."""
    await user_tokens.save(UserTokenGrant("slack", world.id, "UBOB", fake_slack.grant_user_token("UBOB"), ()))
    await services.ingest.mirror()
    for member in ("UALICE", "UBOB", "UERIN"):
        await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), member, True)
    await services.ingest.run()
    services.asks = _asks(services, latency_s=0.05)
    services.status_interval_s = 0.05
    return services


async def _until(condition: Callable[[], object], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def _say(fake: FakeSlackApi, channel: str, user: str, text: str, thread_ts: str | None = None) -> dict[str, Any]:
    """The member's message lands in Slack, and Slack sends the event for it."""
    ts = fake.timeline.add(channel, user, text, thread_ts)
    event = {"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def _bot_messages(fake: FakeSlackApi, channel: str) -> list[Any]:
    return [m for m in fake.timeline.messages(channel) if m.sender_id == BOT]


def _updates_of(fake: FakeSlackApi, channel: str, ts: str) -> list[dict[str, Any]]:
    return [c.params for c in fake.calls_to("chat.update") if c.params["channel"] == channel and c.params["ts"] == ts]


def _block_texts(blocks: list[dict[str, Any]]) -> str:
    out = []
    for block in blocks:
        if "text" in block:
            out.append(block["text"]["text"])
        out += [
            e.get("text", "") if isinstance(e.get("text"), str) else e["text"]["text"]
            for e in block.get("elements", [])
        ]
    return "\n".join(out)


def _action_ids(blocks: list[dict[str, Any]]) -> list[str]:
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


async def _answered(asks: SlackServices, fake: FakeSlackApi, channel: str) -> tuple[Any, list[dict[str, Any]]]:
    """Waits for the ask to finish; returns the bot's one message there (status turned answer) and its blocks."""
    try:
        await _until(
            lambda: any(VOTE_UP_ACTION in _action_ids(b) for (c, _), b in fake.blocks.items() if c == channel)
        )
    except AssertionError:
        print([(c.method, c.verb) for c in fake.calls][-30:], asks._tasks)
        raise
    await asks.drain()
    (message,) = [m for m in _bot_messages(fake, channel) if m.thread_id is not None or channel.startswith("D")]
    ts = fake.timeline.ts(message)
    from tests.fakes.slack_shapes import ts_str

    return message, fake.blocks[(channel, ts_str(ts))]


def _status_figures(fake: FakeSlackApi, channel: str, message: Any) -> tuple[int, dict[str, Any]]:
    from tests.fakes.slack_shapes import ts_str

    updates = _updates_of(fake, channel, ts_str(fake.timeline.ts(message)))
    return len(updates), updates[-1]


# ---------------------------------------------------------------------- mention in a channel
async def test_mention_in_a_channel_answers_in_its_thread_with_a_status_message_turned_rich_answer(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    event = _say(fake_slack, TEAM, "UALICE", ASK_BOB)
    assert (await slack.event(event)).status == 200
    message, blocks = await _answered(asks, fake_slack, TEAM)

    # Where: in the mention's thread, the only post of the bot in #team; who sees it: #team's members.
    mention = fake_slack.timeline.find(TEAM, event["ts"])
    assert message.thread_id == mention.id
    assert len(_bot_messages(fake_slack, TEAM)) == 1
    assert set(fake_slack.world.channels[TEAM].member_ids) == {"UALICE", "UBOB", "UCAROL", BOT}
    # The status message went through stages and ended as the answer: one message, edited in place.
    count, last = _status_figures(fake_slack, TEAM, message)
    assert count >= 2
    stage_texts = [u["text"] for u in _updates_of(fake_slack, TEAM, last["ts"])[:-1]]
    assert any("Planning" in t or "Talking with Bob" in t or "Searching" in t for t in stage_texts), stage_texts
    # The answer: mrkdwn sections, who contributed, a permalink to Alice's own note (she may open it), buttons.
    text = _block_texts(blocks)
    assert "Bluebird" in text and "14 March" in text
    assert "Contributed: Bob's agent" in text
    assert "https://tt1.slack.example/archives/GCNOTES/p" in text
    assert "**" not in text and "&gt; " not in text  # no raw Markdown; nothing quoted into a shared place
    assert _action_ids(blocks)[-2:] == [VOTE_UP_ACTION, "askwith_vote_down"]
    assert CANCEL_ACTION not in _action_ids(blocks)
    assert transcript_texts.transcript_ref(1) in message.text  # the notification fallback keeps the core's marker
    ask = await asks.asks.load(1)
    assert (ask.origin_channel_id, ask.final_channel_id, ask.status) == (TEAM, TEAM, "done")


async def test_mention_in_a_thread_answers_in_that_thread(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    parent_ts = fake_slack.timeline.add(TEAM, "UBOB", "Anyone know the launch plans?", None)
    event = _say(fake_slack, TEAM, "UALICE", ASK_BOB.replace(" ask ", " "), thread_ts=parent_ts)
    await slack.event(event)
    message, blocks = await _answered(asks, fake_slack, TEAM)
    assert message.thread_id == fake_slack.timeline.find(TEAM, parent_ts).id
    assert "14 March" in _block_texts(blocks)
    count, last = _status_figures(fake_slack, TEAM, message)
    assert count >= 2 and VOTE_UP_ACTION in _action_ids(
        json.loads(json.dumps(last["blocks"])) if isinstance(last["blocks"], list) else json.loads(last["blocks"])
    )


async def test_dm_to_the_bot_answers_in_the_dm(slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi) -> None:
    dm = fake_slack.world.dm(BOT, "UALICE").id
    ts = fake_slack.timeline.add(dm, "UALICE", f"<@UBOB> {QUESTION}", None)
    event = {
        "type": "message",
        "channel_type": "im",
        "user": "UALICE",
        "text": f"<@UBOB> {QUESTION}",
        "ts": ts,
        "channel": dm,
    }
    await slack.event(event)
    await _until(lambda: any(VOTE_UP_ACTION in _action_ids(b) for (c, _), b in fake_slack.blocks.items() if c == dm))
    await asks.drain()
    (answer,) = _bot_messages(fake_slack, dm)
    assert answer.thread_id is None  # a DM is answered at its top level
    assert set(fake_slack.world.channels[dm].member_ids) == {"UALICE", BOT}  # only Alice sees it
    count, last = _status_figures(fake_slack, dm, answer)
    assert count >= 2 and "14 March" in last["text"]


# ---------------------------------------------------------------------- follow-up
async def test_a_mention_in_an_answers_thread_follows_up_with_the_same_colleagues(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    first = _say(fake_slack, TEAM, "UALICE", ASK_BOB)
    await slack.event(first)
    await _answered(asks, fake_slack, TEAM)
    await slack.event(_say(fake_slack, TEAM, "UALICE", f"<@{BOT}> and the code name again?", thread_ts=first["ts"]))
    await _until(lambda: len(_bot_messages(fake_slack, TEAM)) == 2)
    await _until(
        lambda: sum(VOTE_UP_ACTION in _action_ids(b) for (c, _), b in fake_slack.blocks.items() if c == TEAM) == 2
    )
    await asks.drain()
    follow_up = await asks.asks.load(2)
    assert follow_up.follow_up_of == 1 and follow_up.colleagues == ["bob"]
    assert follow_up.origin_thread_id == f"{TEAM}:{first['ts']}"
    replies = [
        m for m in _bot_messages(fake_slack, TEAM) if m.thread_id == fake_slack.timeline.find(TEAM, first["ts"]).id
    ]
    assert len(replies) == 2  # both answers in the one thread


# ---------------------------------------------------------------------- cancel
async def test_only_the_asker_may_cancel_and_the_status_message_says_so(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    asks.asks = _asks(asks, latency_s=0.5)  # slow enough to click Cancel mid-way
    await slack.event(_say(fake_slack, TEAM, "UALICE", ASK_BOB))
    await _until(lambda: any(CANCEL_ACTION in _action_ids(b) for (c, _), b in fake_slack.blocks.items() if c == TEAM))

    await slack.click("UBOB", TEAM, CANCEL_ACTION, "1")
    await _until(lambda: fake_slack.responses)
    assert fake_slack.responses[-1]["text"].endswith(progress_texts.cancel_not_allowed())
    assert fake_slack.responses[-1]["response_type"] == "ephemeral"

    await slack.click("UALICE", TEAM, CANCEL_ACTION, "1")
    await asks.drain()
    ask = await asks.asks.load(1)
    assert ask.status == "cancelled" and ask.answer is None
    (message,) = _bot_messages(fake_slack, TEAM)
    assert "cancelled by Alice" in message.text
    blocks = fake_slack.blocks[(TEAM, _ts(fake_slack, message))]
    assert CANCEL_ACTION not in _action_ids(blocks) and "cancelled by Alice" in _block_texts(blocks)


def _ts(fake: FakeSlackApi, message: Any) -> str:
    from tests.fakes.slack_shapes import ts_str

    return ts_str(fake.timeline.ts(message))


# ---------------------------------------------------------------------- Slack refusing
async def test_a_conversation_the_bot_cannot_post_in_gets_the_answer_by_dm(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    await slack.event(_say(fake_slack, QUIET, "UALICE", ASK_BOB))
    dm = fake_slack.world.dm(BOT, "UALICE").id
    await _until(lambda: any(VOTE_UP_ACTION in _action_ids(b) for (c, _), b in fake_slack.blocks.items() if c == dm))
    await asks.drain()
    assert not _bot_messages(fake_slack, QUIET)
    (answer,) = _bot_messages(fake_slack, dm)
    assert "14 March" in answer.text


async def test_status_updates_wait_out_a_429_and_end_on_the_answer(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    fake_slack.rate_limit("chat.update", times=1, retry_after=1)
    await slack.event(_say(fake_slack, TEAM, "UALICE", ASK_BOB))
    message, blocks = await _answered(asks, fake_slack, TEAM)
    assert any(c.verb.endswith("-> 429") for c in fake_slack.calls_to("chat.update"))
    assert "14 March" in _block_texts(blocks) and VOTE_UP_ACTION in _action_ids(blocks)


async def test_votes_are_recorded_with_the_ask(slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi) -> None:
    await slack.event(_say(fake_slack, TEAM, "UALICE", ASK_BOB))
    await _answered(asks, fake_slack, TEAM)
    await slack.click("UALICE", TEAM, VOTE_UP_ACTION, "1")
    await _until(lambda: fake_slack.responses)
    await asks.drain()
    assert await vote_of(asks.db, 1, "alice") == 1
    assert fake_slack.responses[-1]["text"] == follow_up_texts.feedback_thanks(1)


# ---------------------------------------------------------------------- "Ask about this thread"
async def test_message_shortcut_opens_a_modal_and_its_submission_asks_with_the_thread_as_context(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    parent_ts = fake_slack.timeline.add(TEAM, "UCAROL", "Should we ask <@UBOB> about the launch?", None)
    reply_ts = fake_slack.timeline.add(TEAM, "UBOB", "Erin told me something about it", parent_ts)
    message = {
        "type": "message",
        "user": "UBOB",
        "text": "Erin told me something",
        "ts": reply_ts,
        "thread_ts": parent_ts,
    }
    body = message_shortcut_body(
        fake_slack.world.id, "UALICE", TEAM, message, SHORTCUT, response_url=fake_slack.hooks_url + "s/1"
    )
    assert (await slack.send(body)).status == 200
    (modal,) = fake_slack.views
    assert modal["callback_id"] == MODAL
    assert fake_slack.used_triggers  # opened with the click's trigger_id

    values = {
        "colleagues": {"users": {"type": "multi_users_select", "selected_users": ["UBOB"]}},
        "question": {"text": {"type": "plain_text_input", "value": QUESTION}},
    }
    submitted = await slack.send(view_submission_body(fake_slack.world.id, "UALICE", modal, values))
    assert submitted.status == 200
    answer, blocks = await _answered(asks, fake_slack, TEAM)
    assert answer.thread_id == fake_slack.timeline.find(TEAM, parent_ts).id  # answered in the thread asked about
    assert "14 March" in _block_texts(blocks)
    ask = await asks.asks.load(1)
    assert ask.context.splitlines() == [
        "Carol: Should we ask @Bob (<@UBOB>) about the launch?",
        "Bob: Erin told me something about it",
    ]
    count, _ = _status_figures(fake_slack, TEAM, answer)
    assert count >= 2


async def test_the_thread_of_a_conversation_the_asker_is_not_in_is_refused(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    notes = next(c.id for c in fake_slack.world.channels.values() if c.name == "alice-notes")
    parent_ts = fake_slack.timeline.messages(notes)[0]
    ts = _ts(fake_slack, parent_ts)
    view = thread_ask_modal(notes, ts)
    values = {
        "colleagues": {"users": {"type": "multi_users_select", "selected_users": ["UALICE"]}},
        "question": {"text": {"type": "plain_text_input", "value": "what is in it?"}},
    }
    await slack.send(view_submission_body(fake_slack.world.id, "UBOB", view, values))
    await asks.drain()
    assert not _bot_messages(fake_slack, notes)
    assert fake_slack.posts(fake_slack.world.dm(BOT, "UBOB").id) == [texts.thread_not_yours()]
    assert await asks.asks.ask_in_thread(notes, f"{notes}:{ts}") is None  # nothing was asked


async def test_an_expired_trigger_is_refused_like_slack(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    ts = fake_slack.timeline.add(TEAM, "UBOB", "a thread", None)
    message = {"type": "message", "user": "UBOB", "text": "a thread", "ts": ts}
    body = message_shortcut_body(
        fake_slack.world.id, "UALICE", TEAM, message, SHORTCUT, response_url=fake_slack.hooks_url
    )
    await slack.send(body)
    await slack.send(body)  # the same click delivered again: its trigger_id was used
    assert len(fake_slack.views) == 1
    assert any(c.method == "views.open" for c in fake_slack.calls[-3:])


# ---------------------------------------------------------------------- the Assistant side panel
async def test_assistant_panel_suggests_prompts_then_answers_in_its_thread_with_status_lines(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    dm = fake_slack.world.dm(BOT, "UALICE").id
    thread_ts = fake_slack.timeline.add(dm, BOT, "Hi! Ask me anything.", None)  # Slack opens the panel's thread
    started = {
        "type": "assistant_thread_started",
        "assistant_thread": {"user_id": "UALICE", "channel_id": dm, "thread_ts": thread_ts, "context": {}},
        "event_ts": thread_ts,
    }
    assert (await slack.event(started)).status == 200
    assert fake_slack.suggested_prompts[(dm, thread_ts)] == texts.ASSISTANT_PROMPTS
    moved = {**started, "type": "assistant_thread_context_changed"}
    moved["assistant_thread"] = {**started["assistant_thread"], "context": {"channel_id": "CGENERAL"}}
    assert (await slack.event(moved)).status == 200, "the panel moving to another channel is acknowledged"

    text = f"<@UBOB> {QUESTION}"
    ts = fake_slack.timeline.add(dm, "UALICE", text, thread_ts)
    message = {
        "type": "message", "channel_type": "im", "channel": dm, "user": "UALICE", "text": text, "ts": ts,
        "thread_ts": thread_ts,
    }  # fmt: skip
    await slack.event(message)
    await _until(lambda: any(VOTE_UP_ACTION in _action_ids(b) for (c, _), b in fake_slack.blocks.items() if c == dm))
    await asks.drain()
    parent = fake_slack.timeline.find(dm, thread_ts)
    (answer,) = [m for m in _bot_messages(fake_slack, dm) if m.thread_id == parent.id]
    assert "14 March" in _block_texts(fake_slack.blocks[(dm, _ts(fake_slack, answer))])
    statuses = [s for c, t, s in fake_slack.assistant_statuses if (c, t) == (dm, thread_ts)]
    assert len(statuses) >= 2 and any("Talking with Bob" in s or "Planning" in s for s in statuses), statuses
    assert not fake_slack.calls_to("chat.update")  # no status message: the panel's own status line
    ask = await asks.asks.load(1)
    assert (ask.origin_channel_id, ask.origin_thread_id) == (dm, f"{dm}:{thread_ts}")


# ---------------------------------------------------------------------- user groups
async def test_a_user_group_mention_asks_its_members(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    fake_slack.usergroups["SLAUNCH"] = ["UALICE", "UBOB"]  # the asker herself is left out
    await slack.event(_say(fake_slack, TEAM, "UALICE", f"<@{BOT}> ask <!subteam^SLAUNCH|@launch>, {QUESTION}"))
    _, blocks = await _answered(asks, fake_slack, TEAM)
    assert "14 March" in _block_texts(blocks)
    assert (await asks.asks.load(1)).colleagues == ["bob"]


async def test_a_big_user_group_is_confirmed_first(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    fake_slack.usergroups["SALL"] = ["UBOB", "UCAROL", "UDAVE", "UERIN", "UX1", "UX2"]
    await slack.event(_say(fake_slack, TEAM, "UALICE", f"<@{BOT}> <!subteam^SALL> {QUESTION}"))
    await _until(lambda: fake_slack.ephemerals)
    await asks.drain()
    (confirm,) = fake_slack.ephemerals
    assert confirm.user == "UALICE" and confirm.text == texts.group_confirm(6)
    assert not _bot_messages(fake_slack, TEAM)  # nobody's agent was asked yet
    buttons = {e["action_id"]: e["value"] for b in confirm.blocks if b["type"] == "actions" for e in b["elements"]}

    await slack.click("UALICE", TEAM, GROUP_CANCEL_ACTION, buttons[GROUP_CANCEL_ACTION])
    await _until(lambda: fake_slack.responses)
    assert fake_slack.responses[-1]["text"] == texts.group_not_asked()

    await slack.click("UALICE", TEAM, GROUP_CONFIRM_ACTION, buttons[GROUP_CONFIRM_ACTION])
    await _until(lambda: len(fake_slack.ephemerals) == 2)  # confirmed: the core checks them
    await asks.drain()
    assert fake_slack.ephemerals[-1].text == rejection_texts.opted_out(
        "carol"
    )  # the first colleague who cannot take part


# ---------------------------------------------------------------------- names beside ids in memory
async def test_read_and_live_messages_keep_the_mentioned_name_beside_the_id(
    services: SlackServices, fake_slack: FakeSlackApi
) -> None:
    ts = fake_slack.timeline.add(TEAM, "UCAROL", "Ask <@UBOB>, he knows", None)
    await services.port.list_members()
    (read,) = (await services.port.read_history(TEAM)).messages
    assert read.text == "Ask @Bob (<@UBOB>), he knows"
    live = services.port.live_message({"channel": TEAM, "user": "UCAROL", "text": "cc <@UBOB>", "ts": ts})
    assert live.text == "cc @Bob (<@UBOB>)"


def test_a_message_addressed_to_the_bot_is_not_memory(services: SlackServices) -> None:
    event = {"type": "message", "channel": TEAM, "user": "UALICE", "text": f"<@{BOT}> ask <@UBOB> when?", "ts": "1.0"}
    assert not services.port.is_ingestible(event, BOT)
    assert services.port.is_ingestible({**event, "text": f"thanks <@{BOT}>"}, BOT)


async def test_a_plain_reply_in_an_answers_thread_is_the_members_own_talk(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    first = _say(fake_slack, TEAM, "UALICE", ASK_BOB)
    await slack.event(first)
    await _answered(asks, fake_slack, TEAM)
    ts = fake_slack.timeline.add(TEAM, "UBOB", "nice, thanks", first["ts"])
    reply = {"type": "message", "channel_type": "channel", "channel": TEAM, "user": "UBOB", "text": "nice, thanks"}
    await slack.event({**reply, "ts": ts, "thread_ts": first["ts"]})
    await asks.drain()
    assert len(_bot_messages(fake_slack, TEAM)) == 1  # no new ask: in a channel, follow-ups mention the bot
    assert await asks.asks.ask_in_thread(TEAM, f"{TEAM}:{first['ts']}") == 1


async def test_ask_with_a_user_group_asks_its_members(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    """`/ask-with @launch …`: Slack sends the group as `<!subteam^S…|@launch>`; its members are the colleagues."""
    fake_slack.usergroups["SLAUNCH"] = ["UALICE", "UBOB"]  # the asker herself is left out
    response = await slack.command("UALICE", "/ask-with", f"<!subteam^SLAUNCH|@launch> {QUESTION}")
    assert ack_text(response) == texts.asking(["<@UBOB>"])
    await asks.drain()
    assert (await asks.asks.load(1)).colleagues == ["bob"]
    assert [c.params.get("usergroup") for c in fake_slack.calls_to("usergroups.users.list")] == ["SLAUNCH"]


@pytest.mark.parametrize("value", ["abc", str(2**70), "", "-1"])
@pytest.mark.parametrize("action_id", [VOTE_UP_ACTION, "askwith_vote_down", CANCEL_ACTION])
async def test_a_forged_ask_id_on_a_button_is_a_400(slack: Slack, action_id: str, value: str) -> None:
    response = await slack.click("UALICE", "CCGENERAL", action_id, value)
    assert response.status == 400, (response.status, response.body)
