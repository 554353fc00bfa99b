"""`/ask-with` end to end: signed requests into the real bolt app, the real core with a scripted model, and every
post checked where it lands in the fake Slack Web API."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from adapters.slack import texts
from adapters.slack.blocks import APPROVE_ACTION, DENY_ACTION
from adapters.slack.services import SlackServices
from bot.asks.service import AskService
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.platform.port import Member, SharePolicy
from bot.store.chat_store import WorkspaceKey
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from bot.texts import conversation_texts, rejection_texts, transcript_texts
from tests.fakes.asks import QUESTION, two_fact_world
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import Slack, ack_text


@pytest.fixture
def world() -> World:
    source = two_fact_world()
    source.add_member(Member("frank", "frank", "Frank", deactivated=True))
    return slack_world(source)


@pytest.fixture
async def asks(
    services: SlackServices, fake_slack: FakeSlackApi, user_tokens: UserTokenStore, world: World
) -> SlackServices:
    """Alice, Bob and Erin opted in, Bob granted his DMs, history ingested, and the core wired in."""
    await user_tokens.save(UserTokenGrant("slack", world.id, "UBOB", fake_slack.grant_user_token("UBOB"), ()))
    await services.ingest.mirror()
    for member in ("UALICE", "UBOB", "UERIN"):
        await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), member, True)
    await services.ingest.run()
    llm = LLMClient.from_settings(services.settings, backend=ScriptedBackend(scripted_model))
    services.asks = AskService(
        settings=services.settings.replace(approval_timeout_seconds=10.0),
        db=services.db,
        port=services.port,
        llm=llm,
        memory=MemoryAccess(clear=ClearMemory(services.db), fuzzy=None),
        workspace_id=services.ingest.workspace_id,
    )
    return services


ASK_BOB = f"<@UBOB|bob> {QUESTION}"


def _bot_dm(fake: FakeSlackApi, member: str) -> str:
    return fake.world.dm(fake.world.bot_id, member).id


async def _until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


# ---------------------------------------------------------------------- the happy path, and a retry
async def test_ask_with_acks_posts_the_hidden_thread_and_dms_the_answer_once(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi, world: World
) -> None:
    started = time.monotonic()
    response = await slack.command("UALICE", "/ask-with", ASK_BOB)
    assert time.monotonic() - started < 3.0  # Slack's deadline for the acknowledgement
    assert ack_text(response) == texts.asking(["<@UBOB>"])
    await asks.drain()

    agents_channel = await asks.port.agents_channel()
    hidden = fake_slack.posts(agents_channel)
    assert hidden[0].startswith("ask #1: alice with bob:")
    assert any(p.startswith("Alice's agent:") for p in hidden) and any(p.startswith("Bob's agent:") for p in hidden)
    assert all(m.thread_id is not None for m in fake_slack.timeline.messages(agents_channel)[1:])
    answer = fake_slack.posts(_bot_dm(fake_slack, "UALICE"))
    assert len(answer) == 1 and "Bluebird" in answer[0] and "14 March" in answer[0]
    assert transcript_texts.transcript_ref(1) in answer[0]
    notice = fake_slack.posts(_bot_dm(fake_slack, "UBOB"))  # Bob hears what his agent shared, and with whom
    assert len(notice) == 1 and notice[0].startswith("Your askwith agent answered Alice's question")

    posts_before = len(fake_slack.calls_to("chat.postMessage"))
    retried = await slack.send(slack.last_body, retry=1)
    assert retried.status == 200 and retried.body == ""
    await asks.drain()
    assert len(fake_slack.calls_to("chat.postMessage")) == posts_before
    assert fake_slack.posts(_bot_dm(fake_slack, "UALICE")) == answer


# ---------------------------------------------------------------------- approvals
async def _ask_with_bob_on_ask_policy(slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi) -> str:
    await asks.member_settings.set_share_policy(WorkspaceKey("slack", fake_slack.world.id), "UBOB", SharePolicy.ASK)
    assert ack_text(await slack.command("UALICE", "/ask-with", ASK_BOB)) == texts.asking(["<@UBOB>"])
    bob_dm = _bot_dm(fake_slack, "UBOB")
    await _until(lambda: any(dm == bob_dm for dm, _ in fake_slack.blocks))
    (_, ts), buttons = next((k, v) for k, v in fake_slack.blocks.items() if k[0] == bob_dm)
    return buttons[-1]["elements"][0]["value"]


async def test_approve_resumes_and_completes_the_ask(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    approval_id = await _ask_with_bob_on_ask_policy(slack, asks, fake_slack)
    assert not fake_slack.posts(_bot_dm(fake_slack, "UALICE"))  # the ask waits for Bob
    assert (await slack.click("UBOB", _bot_dm(fake_slack, "UBOB"), APPROVE_ACTION, approval_id)).status == 200
    await asks.drain()
    answer = fake_slack.posts(_bot_dm(fake_slack, "UALICE"))
    assert len(answer) == 1 and "14 March" in answer[0]


async def test_deny_makes_bobs_agent_withhold_the_fact(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi
) -> None:
    approval_id = await _ask_with_bob_on_ask_policy(slack, asks, fake_slack)
    await slack.click("UBOB", _bot_dm(fake_slack, "UBOB"), DENY_ACTION, approval_id)
    await asks.drain()
    hidden = fake_slack.posts(await asks.port.agents_channel())
    assert f"Bob's agent: {conversation_texts.agent_withholds('Bob')}" in hidden
    answer = fake_slack.posts(_bot_dm(fake_slack, "UALICE"))
    assert len(answer) == 1 and "14 March" not in answer[0]


# ---------------------------------------------------------------------- what the member sees when it can't run
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<@UBOB|bob>", rejection_texts.empty_question()),
        ("<@UBOB|bob>    ", rejection_texts.empty_question()),
        ("<@UBOB|bob> " + "x" * 2001, rejection_texts.question_too_long(2001, 2000)),
        ("when is the launch?", rejection_texts.no_colleague()),
        ("", texts.ASK_HELP),
        ("@nobody when is the launch?", rejection_texts.unknown_member("nobody")),
        ("<@UNOSUCH> when is the launch?", rejection_texts.unknown_member("UNOSUCH")),
        ("<@UFRANK|frank> when is the launch?", rejection_texts.deactivated_member("frank")),
        ("@carol when is the launch?", rejection_texts.opted_out("carol")),
        ("<@UASKWITHBOT|askwith> when is the launch?", rejection_texts.bot_member("askwith")),
        ("<@UALICE|alice> when is the launch?", rejection_texts.only_yourself()),
        ("help", texts.ASK_HELP),
    ],
)
async def test_every_refusal_tells_the_member_why(
    slack: Slack, asks: SlackServices, fake_slack: FakeSlackApi, text: str, expected: str
) -> None:
    assert ack_text(await slack.command("UALICE", "/ask-with", text)) == expected
    await asks.drain()
    assert not fake_slack.calls_to("chat.postMessage")  # nothing ran


async def test_a_requester_who_has_not_turned_askwith_on_is_told_so(slack: Slack, asks: SlackServices) -> None:
    assert ack_text(await slack.command("UCAROL", "/ask-with", ASK_BOB)) == rejection_texts.requester_inactive("carol")
