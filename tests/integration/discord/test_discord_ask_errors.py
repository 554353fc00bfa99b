"""Every way `/ask-with` can be refused, and the exact text the member sees (ephemeral, after the deferral)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from adapters.discord import texts
from bot.texts import rejection_texts
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import DEFERRED, opt_in


@dataclass(frozen=True)
class Case:
    question: str
    colleagues: Callable[[People], dict[str, Any]]
    expected: Callable[[People], str]


CASES = {
    "empty question": Case("   ", lambda p: {"colleague": p.bob}, lambda p: rejection_texts.empty_question()),
    "mentions but no question": Case("@bob", lambda p: {}, lambda p: rejection_texts.empty_question()),
    "too long": Case(
        "x" * 2001, lambda p: {"colleague": p.bob}, lambda p: rejection_texts.question_too_long(2001, 2000)
    ),
    "no colleague": Case("when is the launch?", lambda p: {}, lambda p: rejection_texts.no_colleague()),
    "unknown member": Case("@zed when is the launch?", lambda p: {}, lambda p: rejection_texts.unknown_member("zed")),
    "opted-out member": Case("when?", lambda p: {"colleague": p.carol}, lambda p: rejection_texts.opted_out("carol")),
    "the bot": Case("when?", lambda p: {"colleague": p.askwith}, lambda p: rejection_texts.bot_member("askwith")),
    "only yourself": Case("when?", lambda p: {"colleague": p.alice}, lambda p: rejection_texts.only_yourself()),
    "yourself by mention": Case("<@{alice}> when?", lambda p: {}, lambda p: rejection_texts.only_yourself()),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_refused_ask_tells_the_member_why(discord_bot: DiscordHarness, people: People, case: Case) -> None:
    api = discord_bot.api
    await opt_in(discord_bot, people.alice, people.bob)
    question = case.question.format(alice=people.id("alice"))

    token = discord_bot.gateway.slash("ask-with", people.alice, {"question": question}, users=case.colleagues(people))

    replies = await api.wait_for(lambda: api.followups_for(token))
    callback = next(c for c in api.callbacks if c.token == token)
    assert (callback.type, callback.ephemeral) == (DEFERRED, True)
    assert [r.content for r in replies] == [case.expected(people)]
    assert replies[0].ephemeral
    assert not api.requests("POST", r"/channels/\d+/threads"), "a refused ask never reaches the agents"


async def test_requester_who_has_not_opted_in_is_told_to_turn_askwith_on(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    await opt_in(discord_bot, people.bob)

    token = discord_bot.gateway.slash("ask-with", people.alice, {"question": "when?"}, users={"colleague": people.bob})

    replies = await api.wait_for(lambda: api.followups_for(token))
    assert [r.content for r in replies] == [rejection_texts.requester_inactive("alice")]


async def test_a_failing_command_tells_the_member_instead_of_leaving_them_waiting(
    discord_bot: DiscordHarness, people: People, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(request: object) -> int:
        raise RuntimeError("database on fire")

    monkeypatch.setattr(discord_bot.runtime.services.asks, "submit", broken)
    token = discord_bot.gateway.slash("ask-with", people.alice, {"question": "when?"}, users={"colleague": people.bob})

    replies = await discord_bot.api.wait_for(lambda: discord_bot.api.followups_for(token))
    assert [r.content for r in replies] == [texts.command_failed()] and replies[0].ephemeral
