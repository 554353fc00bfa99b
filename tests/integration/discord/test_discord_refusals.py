"""Discord refusing a call fails that one call, never the ask: a colleague with closed DMs (403/50007), an
interaction whose token is over (401/50027 on real Discord, 404/10015 when forgotten), an unknown user (404)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.asks import models as ask_models
from bot.errors import ChatPlatformError
from tests.fakes.asks import QUESTION
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_approvals import bob_asks_first, final_answer
from tests.integration.discord.test_discord_ask_with import ask, opt_in


async def approvals_recorded(bot: DiscordHarness) -> list[str | None]:
    async with bot.db.session() as session:
        rows = await session.execute(select(ask_models.Turn.agent, ask_models.Turn.data))
        return [data.get("approval") for agent, data in rows.all() if agent == "bob"]


async def test_a_refusal_is_a_chat_platform_error_naming_status_and_code(discord_bot: DiscordHarness) -> None:
    with pytest.raises(ChatPlatformError) as refused:
        await discord_bot.port.open_dm("42")  # no such user
    assert refused.value.call == "to open a DM with 42"
    assert refused.value.reason == "HTTP 404, code 10013: Unknown User"


async def test_a_colleague_with_closed_dms_who_must_approve_shares_nothing_and_the_ask_still_answers(
    discord_bot: DiscordHarness, people: People
) -> None:
    await bob_asks_first(discord_bot, people)  # bob's policy: ask before sharing
    discord_bot.api.close_dms(people.id("bob"))

    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)

    answer = await final_answer(discord_bot, token)
    assert "14 March" not in answer, "nobody approved, so bob's agent shared nothing"
    assert "unreachable" in await approvals_recorded(discord_bot)
    bob_dm = discord_bot.api.dm_with(people.id("bob")).id
    assert discord_bot.api.requests("POST", rf"/channels/{bob_dm}/messages"), "the prompt was attempted"


async def test_a_colleague_with_closed_dms_misses_the_share_notice_but_the_ask_answers(
    discord_bot: DiscordHarness, people: People
) -> None:
    await opt_in(discord_bot, people.alice, people.bob)
    await discord_bot.runtime.ingest.run()
    discord_bot.api.close_dms(people.id("bob"))

    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)

    answer = await final_answer(discord_bot, token)
    assert "14 March" in answer and "Bluebird" in answer
    bob_dm = discord_bot.api.dm_with(people.id("bob")).id
    await discord_bot.api.wait_for(lambda: discord_bot.api.requests("POST", rf"/channels/{bob_dm}/messages"))
    assert not discord_bot.world.messages.get(bob_dm), "the notice was refused, and nothing else broke"


@pytest.mark.parametrize("forgotten", [False, True], ids=["401-invalid-webhook-token", "404-unknown-webhook"])
async def test_an_interaction_that_is_over_gets_the_answer_by_dm(
    discord_bot: DiscordHarness, people: People, forgotten: bool
) -> None:
    api = discord_bot.api
    await opt_in(discord_bot, people.alice, people.bob)
    await discord_bot.runtime.ingest.run()
    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)
    await api.wait_for(lambda: api.followups_for(token))
    api.expire(token, forgotten=forgotten)

    alice_dm = api.dm_with(people.id("alice")).id
    answers = await api.wait_for(
        lambda: [m for m in discord_bot.world.messages[alice_dm] if "transcripts show" in m.text]
    )
    assert len(answers) == 1 and "Bluebird" in api.shown(answers[0].id)  # the answer's embed
    assert not [f for f in api.followups_for(token) if "transcripts show" in f.content]
