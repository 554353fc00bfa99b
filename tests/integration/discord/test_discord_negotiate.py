"""`/negotiate colleague:@bob` end to end through the real discord.py client and command tree, against the fake
Discord API, with the scripted negotiators: deferred at once, both members get Accept / Decline buttons by DM,
the tasks move only when both accept, and every refusal reads why."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.negotiation import messages
from bot.platform.port import ChatMessage, Member
from bot.texts import rejection_texts
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import DEFERRED
from tests.negotiation_helpers import holdings, load_sample_profiles, scripted_negotiators


@pytest.fixture
async def negotiating(discord_bot: DiscordHarness) -> DiscordHarness:
    services = discord_bot.runtime.services
    await load_sample_profiles(services.db, services.port)  # alice and bob
    services.negotiation_clients = scripted_negotiators
    services.settings = services.settings.replace(negotiation_approval_timeout_seconds=10.0)
    return discord_bot


async def _prompts(bot: DiscordHarness, people: People) -> dict[str, ChatMessage]:
    dms = {h: bot.api.dm_with(people.id(h)).id for h in ("alice", "bob")}

    def both() -> dict[str, ChatMessage] | None:
        found = {h: m for h, dm in dms.items() for m in bot.world.messages.get(dm, []) if bot.api.components.get(m.id)}
        return found if len(found) == 2 else None

    return await bot.api.wait_for(both)


def _buttons(bot: DiscordHarness, prompt: ChatMessage) -> dict[str, str]:
    """label -> custom id"""
    return {b["label"]: b["custom_id"] for row in bot.api.components[prompt.id] for b in row["components"]}


async def _negotiate_and_answer(bot: DiscordHarness, people: People, bob_says: str) -> str:
    token = bot.gateway.slash("negotiate", people.alice, users={"colleague": people.bob})
    prompts = await _prompts(bot, people)
    first = next(c for c in bot.api.callbacks if c.token == token)
    assert (first.type, first.ephemeral) == (DEFERRED, True)
    assert bot.api.followups_for(token)[0].content.startswith("\U0001f91d Your agent is negotiating with Bob's agent")
    for prompt in prompts.values():
        assert set(_buttons(bot, prompt)) == {"Accept", "Decline"}
        assert prompt.text.startswith("**Accept the task trade your agent agreed with")
    bot.gateway.click(_buttons(bot, prompts["alice"])["Accept"], people.alice, prompts["alice"])
    bot.gateway.click(_buttons(bot, prompts["bob"])[bob_says], people.bob, prompts["bob"])
    return token


def _last_dm(bot: DiscordHarness, member: Member) -> Callable[[], str | None]:
    def last() -> str | None:
        messages_ = bot.world.messages.get(bot.api.dm_with(member.id).id, [])
        # a prompt (sent with buttons, even once they are gone) is not the outcome message
        return messages_[-1].text if messages_ and messages_[-1].id not in bot.api.components else None

    return last


async def test_both_accept_and_the_tasks_move(negotiating: DiscordHarness, people: People) -> None:
    services = negotiating.runtime.services
    before = await holdings(services.db, services.port, "alice", "bob")
    await _negotiate_and_answer(negotiating, people, "Accept")
    assert await negotiating.api.wait_for(_last_dm(negotiating, people.alice)) == messages.trade_confirmed("bob")
    assert await negotiating.api.wait_for(_last_dm(negotiating, people.bob)) == messages.trade_confirmed("alice")
    after = await holdings(services.db, services.port, "alice", "bob")
    assert after != before and sorted(after["alice"] + after["bob"]) == sorted(before["alice"] + before["bob"])


async def test_a_decline_leaves_the_tasks_where_they_were(negotiating: DiscordHarness, people: People) -> None:
    services = negotiating.runtime.services
    before = await holdings(services.db, services.port, "alice", "bob")
    await _negotiate_and_answer(negotiating, people, "Decline")
    assert await negotiating.api.wait_for(_last_dm(negotiating, people.alice)) == messages.trade_declined("bob")
    assert await negotiating.api.wait_for(_last_dm(negotiating, people.bob)) == messages.trade_declined("alice")
    assert await holdings(services.db, services.port, "alice", "bob") == before
    declined = [f for f in negotiating.api.followups if f.original and "You declined the trade" in f.content]
    assert len(declined) == 1


async def test_a_member_with_closed_dms_cannot_accept_so_the_trade_is_declined_and_the_other_is_told(
    negotiating: DiscordHarness, people: People
) -> None:
    services = negotiating.runtime.services
    before = await holdings(services.db, services.port, "alice", "bob")
    negotiating.api.close_dms(people.id("bob"))

    negotiating.gateway.slash("negotiate", people.alice, users={"colleague": people.bob})

    alice_dm = negotiating.api.dm_with(people.id("alice")).id
    prompt = await negotiating.api.wait_for(
        lambda: [m for m in negotiating.world.messages.get(alice_dm, []) if negotiating.api.components.get(m.id)]
    )
    negotiating.gateway.click(_buttons(negotiating, prompt[0])["Accept"], people.alice, prompt[0])
    assert await negotiating.api.wait_for(_last_dm(negotiating, people.alice)) == messages.trade_declined("bob")
    assert await holdings(services.db, services.port, "alice", "bob") == before


REFUSALS = {
    "the bot": ("alice", "askwith", lambda p: messages.counterpart_is_bot("askwith")),
    "yourself": ("alice", "alice", lambda p: messages.counterpart_is_yourself()),
    "no profile for them": ("alice", "carol", lambda p: messages.their_profile_missing("carol")),
    "no profile for you": ("carol", "bob", lambda p: messages.your_profile_missing()),
    "unknown member": ("alice", "zed", lambda p: rejection_texts.unknown_member("zed")),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
async def test_every_refusal_tells_the_member_why(
    negotiating: DiscordHarness, people: People, case: tuple[str, str, Callable[[People], str]]
) -> None:
    initiator, counterpart, expected = case
    colleague = Member("999", "zed", "Zed") if counterpart == "zed" else getattr(people, counterpart)
    token = negotiating.gateway.slash("negotiate", getattr(people, initiator), users={"colleague": colleague})
    replies = await negotiating.api.wait_for(lambda: negotiating.api.followups_for(token))
    assert [r.content for r in replies] == [expected(people)] and replies[0].ephemeral
    assert not [
        m for msgs in negotiating.world.messages.values() for m in msgs if negotiating.api.components.get(m.id)
    ]
