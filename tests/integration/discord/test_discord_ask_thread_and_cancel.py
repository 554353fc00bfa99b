"""The "Ask about this thread" message command and its form, the Cancel button, and asking a role, through the real
discord.py client against the fake Discord (which fails like Discord: 429 with retry_after, 404/10008, 10062)."""

from __future__ import annotations

from bot.asks import models
from bot.platform.port import Member
from bot.texts import progress_texts
from tests.fakes.asks import QUESTION
from tests.fakes.discord_shapes import Role, new_id
from tests.integration.discord.chat_helpers import answered, bot_posts, buttons_of
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import settings_answer
from tests.integration.discord.test_discord_chat_asks import channel, load_ask, ready, start_thread


MODAL, DEFERRED, DEFERRED_UPDATE = 9, 5, 6
FORM = "Ask about this thread"


async def test_ask_about_this_thread_opens_a_form_and_answers_in_the_thread_with_its_messages_as_context(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    general = channel(discord_bot, "general")
    thread = start_thread(discord_bot, people, general)
    await ready(discord_bot, people)
    target = api.replies(api.public_threads()[thread])[-1]

    opened = discord_bot.gateway.context_menu(FORM, people.alice, target)
    modal = (await api.wait_for(lambda: [c for c in api.callbacks if c.token == opened]))[0]
    assert modal.type == MODAL and modal.data["title"] == FORM
    kinds = [(row["type"], row["component"]["type"]) for row in modal.data["components"]]
    assert kinds == [(18, 5), (18, 4)], "a label with a user select, a label with a text input"

    submitted = discord_bot.gateway.submit(
        modal.data["custom_id"], people.alice, thread,
        texts={"askwith:thread:question": QUESTION}, users={"askwith:thread:colleagues": [people.bob]},
    )  # fmt: skip
    status = await answered(discord_bot, thread, token=submitted)
    response = next(c for c in api.callbacks if c.token == submitted)
    assert response.type == DEFERRED and not response.ephemeral, "answered at once: thinking…, in the thread"
    assert api.originals[submitted] == status.message.id and status.message.thread_id == thread
    assert "Bluebird" in status.shown and [b["label"] for b in status.buttons] == ["\U0001f44d", "\U0001f44e"]
    webhook_edits = [c for c in status.edits if c.path.startswith("/webhooks/")]
    assert webhook_edits and webhook_edits == status.edits, "edited through the interaction while it lives"
    ask = await load_ask(discord_bot, 1)
    assert ask.colleagues == ["bob"] and ask.context == "Bob: Let's settle the launch here."
    assert ask.origin_thread_id == thread


async def test_only_the_asker_may_cancel_and_the_status_message_says_cancelled(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    await ready(discord_bot, people)
    ask_first = discord_bot.gateway.slash("askwith", people.bob, {"policy": "ask"}, subcommand="share")
    await settings_answer(api, ask_first)
    general = channel(discord_bot, "general")
    discord_bot.gateway.message(
        general, people.alice, f"<@{discord_bot.world.bot_id}> ask <@{people.id('bob')}> {QUESTION}"
    )
    bob_dm = api.dm_with(people.id("bob")).id
    await api.wait_for(lambda: [m for m in discord_bot.world.messages.get(bob_dm, []) if api.components.get(m.id)])
    status = bot_posts(discord_bot, general)[0]  # waiting on Bob's approval: still the status, with Cancel
    waiting = f"\u23f3 <@{people.id('alice')}>: {progress_texts.progress_stage('waiting', 'Bob')}"
    await api.wait_for(lambda: api.find_message(status.id).text == waiting)  # the stage, shown by an edit
    cancel = next(b["custom_id"] for b in buttons_of(discord_bot, status.id) if b["label"] == "Cancel")

    intruder = discord_bot.gateway.press(cancel, people.carol, status.id)
    refusal = await api.wait_for(lambda: [f for f in api.followups_for(intruder)])
    assert (
        refusal[0].ephemeral and refusal[0].content == "Only the member who asked (or an admin) can cancel this ask."
    )
    assert (await discord_bot.runtime.services.asks.load(1)).status != models.AskStatus.CANCELLED.value

    pressed = discord_bot.gateway.press(cancel, people.alice, status.id)
    final = await answered(discord_bot, general)
    assert next(c for c in api.callbacks if c.token == pressed).type == DEFERRED_UPDATE
    assert final.message.id == status.id and final.embeds[0]["title"] == "Cancelled"
    assert final.buttons == [], "no Cancel any more, and no votes on a cancelled ask"
    edits = [e.body["content"] for e in final.edits]  # the stages as they came (Bob's agent searches, then waits)
    assert edits[0] == f"\u23f3 <@{people.id('alice')}>, your agent is on it." and waiting in edits
    ask = await load_ask(discord_bot, 1)
    assert ask.status == models.AskStatus.CANCELLED.value and ask.final_message_id == status.id
    assert "14 March" not in final.shown


async def test_a_role_of_more_than_five_people_is_confirmed_before_asking(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    for handle in ("frank", "gina"):
        discord_bot.world.add_member(Member(new_id(), handle, handle.title()))
    design = Role(new_id(), "design")
    api.extras.roles[design.id] = design
    everyone = [m for m in discord_bot.world.members.values() if not m.is_bot]
    for member in everyone:
        api.extras.member_roles[member.id] = [design.id]
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")

    discord_bot.gateway.message(general, people.alice, f"<@{discord_bot.world.bot_id}> ask <@&{design.id}> {QUESTION}")

    prompt = (
        await api.wait_for(lambda: [m for m in bot_posts(discord_bot, general) if buttons_of(discord_bot, m.id)])
    )[0]
    assert prompt.text == "@design would ask 7 people's agents. Ask them all?"
    labels = {b["label"]: b["custom_id"] for b in buttons_of(discord_bot, prompt.id)}
    assert list(labels) == ["Ask them all", "Cancel"]
    not_hers = discord_bot.gateway.press(labels["Ask them all"], people.bob, prompt.id)
    note = await api.wait_for(lambda: [c for c in api.callbacks if c.token == not_hers])
    assert note[0].ephemeral and note[0].data["content"] == "Only the member who asked can confirm this."

    discord_bot.gateway.press(labels["Ask them all"], people.alice, prompt.id)
    # carol and the rest never turned askwith on: the core refuses, naming one, as a reply where she asked
    refusal = await api.wait_for(lambda: [m for m in bot_posts(discord_bot, general) if "has not turned on" in m.text])
    assert refusal and not buttons_of(discord_bot, prompt.id)


async def test_a_refused_form_answers_the_member_alone_after_its_public_thinking_goes(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    general = channel(discord_bot, "general")
    thread = start_thread(discord_bot, people, general)
    await ready(discord_bot, people)
    target = api.replies(api.public_threads()[thread])[-1]
    opened = discord_bot.gateway.context_menu(FORM, people.alice, target)
    modal = (await api.wait_for(lambda: [c for c in api.callbacks if c.token == opened]))[0]

    submitted = discord_bot.gateway.submit(
        modal.data["custom_id"], people.alice, thread,
        texts={"askwith:thread:question": QUESTION}, users={"askwith:thread:colleagues": [people.alice]},
    )  # fmt: skip

    refusal = (await api.wait_for(lambda: api.followups_for(submitted)))[0]
    assert next(c for c in api.callbacks if c.token == submitted).type == DEFERRED
    assert refusal.ephemeral and not refusal.original and refusal.content
    assert api.requests("DELETE", rf"/webhooks/\d+/{submitted}/messages/@original"), "the public thinking went"
    assert not bot_posts(discord_bot, thread)
