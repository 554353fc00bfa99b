"""Approvals with buttons: a member whose policy is "ask" gets a DM with Approve / Deny; the click decides what
their agent may share, the prompt is updated, and nobody else can decide for them. A click is acknowledged before
the decision is stored (Discord's 3 seconds), then the prompt is edited or the clicker alone is told why not."""

from __future__ import annotations

from bot.platform.port import ChatMessage
from bot.texts import approval_texts, conversation_texts
from tests.fakes.asks import QUESTION
from tests.fakes.discord_routes import FollowUp
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import ask, opt_in, settings_answer


DEFERRED_UPDATE = 6


async def answer_to(bot: DiscordHarness, click: str) -> tuple[FollowUp, dict[str, object]]:
    """What the clicker reads after the click's deferral: the prompt edited (`original`) or a note only they see,
    with the request's body."""
    api = bot.api
    said = (await api.wait_for(lambda: api.followups_for(click)))[0]
    assert next(c for c in api.callbacks if c.token == click).type == DEFERRED_UPDATE, "acknowledged at once"
    body = next(c.body for c in api.calls if c.path.startswith("/webhooks/") and click in c.path)
    return said, body


async def bob_asks_first(bot: DiscordHarness, people: People) -> None:
    await opt_in(bot, people.alice, people.bob)
    token = bot.gateway.slash("askwith", people.bob, {"policy": "ask"}, subcommand="share")
    reply = await settings_answer(bot.api, token)
    assert "Sharing: `ask`" in reply.content
    await bot.runtime.ingest.run()


async def prompt_in_dm(bot: DiscordHarness, people: People) -> ChatMessage:
    dm = bot.api.dm_with(people.id("bob")).id
    prompts = await bot.api.wait_for(lambda: [m for m in bot.world.messages[dm] if bot.api.components.get(m.id)])
    assert len(prompts) == 1
    return prompts[0]


def button(bot: DiscordHarness, prompt: ChatMessage, label: str) -> str:
    buttons = [b for row in bot.api.components[prompt.id] for b in row["components"]]
    return next(b["custom_id"] for b in buttons if b["label"] == label)


async def final_answer(bot: DiscordHarness, token: str) -> str:
    api = bot.api
    found = await api.wait_for(lambda: [f for f in api.followups_for(token) if "transcripts show" in f.content])
    return api.shown(found[0].id)  # the answer's text and embed


async def test_approve_lets_the_agent_share(discord_bot: DiscordHarness, people: People) -> None:
    await bob_asks_first(discord_bot, people)
    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)

    prompt = await prompt_in_dm(discord_bot, people)
    card = discord_bot.api.shown(prompt.id)  # the title, then the card's embed
    assert prompt.text.startswith(f"**{approval_texts.approval_title('Alice')}**") and "14 March" in card
    assert "Question from Alice" in card and "Who will see it" in card and "UTC" in card
    click = discord_bot.gateway.click(button(discord_bot, prompt, "Approve"), people.bob, prompt)

    answer = await final_answer(discord_bot, token)
    assert "14 March" in answer and "Bluebird" in answer
    update, body = await answer_to(discord_bot, click)
    assert update.original and body["components"] == [] and "You approved this share" in update.content


async def test_deny_keeps_the_fact_private(discord_bot: DiscordHarness, people: People) -> None:
    await bob_asks_first(discord_bot, people)
    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)

    prompt = await prompt_in_dm(discord_bot, people)
    click = discord_bot.gateway.click(button(discord_bot, prompt, "Deny"), people.bob, prompt)

    answer = await final_answer(discord_bot, token)
    assert "14 March" not in answer
    update, _ = await answer_to(discord_bot, click)
    assert update.original and "You declined" in update.content
    thread_talk = [m.text for msgs in discord_bot.world.messages.values() for m in msgs if m.thread_id]
    assert f"Bob's agent: {conversation_texts.agent_withholds('Bob')}" in thread_talk
    assert not any("14 March" in t for t in thread_talk)


async def test_only_the_member_asked_can_decide_and_a_late_click_is_told_so(
    discord_bot: DiscordHarness, people: People
) -> None:
    await bob_asks_first(discord_bot, people)
    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)
    prompt = await prompt_in_dm(discord_bot, people)
    approve = button(discord_bot, prompt, "Approve")

    intruder = discord_bot.gateway.click(approve, people.alice, prompt)
    note, _ = await answer_to(discord_bot, intruder)
    assert (note.original, note.ephemeral) == (False, True)
    assert note.content == "Only the member who was asked can answer this request."

    seen_elsewhere = discord_bot.api.message_out(prompt)  # Bob's phone still shows the buttons
    discord_bot.gateway.click(button(discord_bot, prompt, "Deny"), people.bob, prompt)
    assert "14 March" not in await final_answer(discord_bot, token)
    late = discord_bot.gateway.click(approve, people.bob, prompt, as_seen=seen_elsewhere)
    again, _ = await answer_to(discord_bot, late)
    assert again.content.startswith("This request is no longer waiting for you")


async def test_no_answer_in_time_counts_as_deny_and_the_prompt_says_so(
    discord_bot: DiscordHarness, people: People
) -> None:
    discord_bot.runtime.services.asks.settings = discord_bot.runtime.services.asks.settings.replace(
        approval_timeout_seconds=0.3
    )
    await bob_asks_first(discord_bot, people)
    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)
    prompt = await prompt_in_dm(discord_bot, people)

    assert "14 March" not in await final_answer(discord_bot, token)
    edits = discord_bot.api.requests("PATCH", rf"/channels/\d+/messages/{prompt.id}")
    assert edits and "No answer in time" in edits[-1].body["content"] and edits[-1].body["components"] == []


async def test_a_click_on_a_prompt_this_process_no_longer_holds_still_reaches_the_ask(
    discord_bot: DiscordHarness, people: People
) -> None:
    """As when another bot process posted the prompt, or this one restarted: the click is stored, and the ask,
    which also watches the stored decision, goes on with it."""
    await bob_asks_first(discord_bot, people)
    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)
    prompt = await prompt_in_dm(discord_bot, people)
    approve = button(discord_bot, prompt, "Approve")
    registry, approval_id = discord_bot.runtime.services.port.approvals, approve.rsplit(":", 1)[-1]
    await discord_bot.api.wait_for(lambda: registry.pending(approval_id))  # tracked once the post returned
    registry.take(approval_id)  # forgotten here

    click = discord_bot.gateway.click(approve, people.bob, prompt)

    answer = await final_answer(discord_bot, token)
    assert "14 March" in answer
    update, _ = await answer_to(discord_bot, click)
    assert update.original and "You approved this request" in update.content
