"""Asking where you are, through the real discord.py client against the fake Discord: a mention in a channel, a
mention in a thread, a DM, and a follow-up in the thread. Each checks where the status message and the answer land
(and so who can see them), the answer's embed and buttons, and the status message's edits: how many, how far apart,
and the final state (the answer, no Cancel button)."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from bot.asks import models
from bot.asks.progress import FINAL_STAGES, Stage
from bot.store import models as store_models
from bot.texts import progress_texts
from tests.fakes.asks import LAUNCH, QUESTION
from tests.fakes.discord_shapes import new_id
from tests.integration.discord.chat_helpers import answered, bot_posts, edit_gaps
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_ask_with import opt_in


REPLY = 19
MIN_GAP_S = 0.9  # the status message is edited at most about once a second


async def ready(bot: DiscordHarness, people: People) -> None:
    bot.gateway.connect()  # GUILD_CREATE: discord.py knows the server, its channels, threads and members
    await opt_in(bot, people.alice, people.bob)
    await bot.runtime.ingest.run()


def channel(bot: DiscordHarness, name: str) -> str:
    return next(c.id for c in bot.world.channels.values() if c.name == name)


async def load_ask(bot: DiscordHarness, ask_id: int, *, timeout: float = 10.0) -> models.Ask:
    """The ask once its final post is recorded (the post is on Discord a moment before the row says so)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (ask := await bot.runtime.services.asks.load(ask_id)).final_post != models.FinalPost.POSTED.value:
        assert loop.time() < deadline, f"ask #{ask_id} not finished: {ask.status}"
        await asyncio.sleep(0.05)
    return ask


async def test_a_mention_in_a_channel_is_answered_there_in_one_status_message(
    discord_bot: DiscordHarness, people: People
) -> None:
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")
    bot_id = discord_bot.world.bot_id

    question = discord_bot.gateway.message(general, people.alice, f"<@{bot_id}> ask <@{people.id('bob')}>, {QUESTION}")

    status = await answered(discord_bot, general)
    # where: a reply to the question, in #general (everyone who saw the question sees it); nothing by DM
    assert discord_bot.api.references[status.message.id] == question.id
    assert [m.id for m in bot_posts(discord_bot, general)] == [status.message.id], "one message: status, then answer"
    assert not discord_bot.world.messages.get(discord_bot.api.dm_with(people.id("alice")).id)
    # the answer: the embed (both facts, each source), the asker named, the transcript reference, 👍/👎, no Cancel
    assert "Bluebird" in status.shown and "14 March" in status.shown
    assert status.embeds[0]["title"] == "Answer" and status.embeds[0]["footer"]["text"].startswith("ask #")
    assert status.message.text.startswith(f"<@{people.id('alice')}>")
    assert [b["label"] for b in status.buttons] == ["\U0001f44d", "\U0001f44e"]
    # the status edits: the first adds Cancel, the last is the answer; never faster than about one a second
    first, last = status.edits[0].body, status.edits[-1].body
    assert [b["label"] for row in first["components"] for b in row["components"]] == ["Cancel"]
    assert last["embeds"] and "Cancel" not in str(last["components"])
    assert 2 <= len(status.edits) <= 8
    assert all(gap >= MIN_GAP_S for gap in edit_gaps(status.edits))
    ask = await load_ask(discord_bot, 1)
    assert (ask.origin_channel_id, ask.origin_thread_id, ask.final_message_id) == (general, None, status.message.id)


def start_thread(bot: DiscordHarness, people: People, parent: str) -> str:
    """Bob starts a public thread in `parent` (its id is its starter message's) and says something in it."""
    starter = bot.world.add_message(parent, people.id("bob"), "Launch planning", message_id=new_id())
    bot.world.add_message(
        parent, people.id("bob"), "Let's settle the launch here.", thread_id=starter.id, message_id=new_id()
    )
    return starter.id


async def test_a_mention_in_a_thread_is_answered_in_the_thread_and_a_follow_up_keeps_the_colleagues(
    discord_bot: DiscordHarness, people: People
) -> None:
    general = channel(discord_bot, "general")
    thread = start_thread(discord_bot, people, general)
    await ready(discord_bot, people)
    bot_id = discord_bot.world.bot_id

    asked = discord_bot.gateway.message(
        general, people.alice, f"<@{bot_id}> ask <@{people.id('bob')}> {QUESTION}", thread_id=thread
    )
    status = await answered(discord_bot, thread)
    assert status.message.thread_id == thread and discord_bot.api.references[status.message.id] == asked.id
    assert not [m for m in bot_posts(discord_bot, general)], "nothing in the channel itself"
    assert "Bluebird" in status.shown and status.edits[-1].body["embeds"]
    first = await load_ask(discord_bot, 1)
    assert (first.origin_channel_id, first.origin_thread_id) == (general, thread)

    # a follow-up: a mention in the same thread, naming nobody: the same ask's colleagues, linked to it
    discord_bot.gateway.message(
        general, people.alice, f"<@{bot_id}> and who told you the code name?", thread_id=thread
    )
    second = await discord_bot.api.wait_for(
        lambda: [m for m in bot_posts(discord_bot, thread) if m.id != status.message.id and "show 2" in m.text]
    )
    follow_up = await load_ask(discord_bot, 2)
    assert (follow_up.follow_up_of, follow_up.colleagues) == (1, ["bob"])
    assert follow_up.question == "and who told you the code name?"
    assert second[0].thread_id == thread and discord_bot.api.embeds[second[0].id]


async def test_a_dm_to_the_bot_is_answered_in_the_dm(discord_bot: DiscordHarness, people: People) -> None:
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")

    discord_bot.gateway.dm(people.alice, f"ask <@{people.id('bob')}> {QUESTION}")

    dm = discord_bot.api.dm_with(people.id("alice")).id
    status = await answered(discord_bot, dm)
    assert "Bluebird" in status.shown and "14 March" in status.shown
    assert [m.id for m in bot_posts(discord_bot, dm)] == [status.message.id]
    assert not bot_posts(discord_bot, general)
    ask = await load_ask(discord_bot, 1)
    assert ask.origin_channel_id is None and ask.final_channel_id == dm


async def test_where_the_bot_may_not_post_the_status_and_answer_go_by_dm(
    discord_bot: DiscordHarness, people: People
) -> None:
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")
    discord_bot.api.refuse_posts(general)  # 403/50013 Missing Permissions

    discord_bot.gateway.message(
        general, people.alice, f"<@{discord_bot.world.bot_id}> ask <@{people.id('bob')}> {QUESTION}"
    )

    dm = discord_bot.api.dm_with(people.id("alice")).id
    status = await answered(discord_bot, dm)
    refused = discord_bot.api.requests("POST", rf"/channels/{general}/messages")
    assert len(refused) == 1 and "Bluebird" in status.shown
    assert not bot_posts(discord_bot, general)
    notes = [m.text for m in bot_posts(discord_bot, dm) if m.id != status.message.id]
    assert notes == [f"I may not post in <#{general}>, so here is your ask's progress and answer, by DM."]


async def test_a_slower_ask_shows_its_stages_in_the_status_message_about_once_a_second(
    discord_bot: DiscordHarness, people: People
) -> None:
    discord_bot.runtime.services.asks.llm.backend.latency_s = 0.3  # type: ignore[attr-defined]
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")

    discord_bot.gateway.message(
        general, people.alice, f"<@{discord_bot.world.bot_id}> ask <@{people.id('bob')}> {QUESTION}"
    )

    status = await answered(discord_bot, general, timeout=30)
    shown = [e.body["content"] for e in status.edits[:-1]]
    assert shown[0] == f"\u23f3 <@{people.id('alice')}>, your agent is on it.", "the first edit adds Cancel"
    stages = [line.split(": ", 1)[1] for line in shown[1:]]
    known = {progress_texts.progress_stage(stage.value, name) for stage in Stage for name in ("Alice", "Bob", "")}
    known -= {progress_texts.progress_stage(stage.value) for stage in FINAL_STAGES}
    assert stages and set(stages) <= known, shown  # e.g. searching Alice's messages, then talking with Bob's agent
    assert all(line.startswith(f"\u23f3 <@{people.id('alice')}>") for line in shown)
    assert all(gap >= MIN_GAP_S for gap in edit_gaps(status.edits))
    assert status.edits[-1].body["embeds"] and "Bluebird" in status.shown


async def test_a_source_said_in_a_thread_links_to_the_thread(discord_bot: DiscordHarness, people: People) -> None:
    general = channel(discord_bot, "general")
    thread = start_thread(discord_bot, people, general)
    said = discord_bot.world.add_message(general, people.id("bob"), LAUNCH, thread_id=thread, message_id=new_id())
    await ready(discord_bot, people)

    discord_bot.gateway.message(
        general, people.alice, f"<@{discord_bot.world.bot_id}> ask <@{people.id('bob')}> {QUESTION}"
    )

    status = await answered(discord_bot, general)
    links = [f["value"] for f in status.embeds[0]["fields"] if said.id in f["value"]]
    assert links and f"https://discord.com/channels/{discord_bot.api.guild_id}/{thread}/{said.id}" in links[0]


async def test_a_reply_to_the_answer_is_a_follow_up_answered_as_a_reply(
    discord_bot: DiscordHarness, people: People
) -> None:
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")
    discord_bot.gateway.message(
        general, people.alice, f"<@{discord_bot.world.bot_id}> ask <@{people.id('bob')}> {QUESTION}"
    )
    first = await answered(discord_bot, general)
    await load_ask(discord_bot, 1)

    reply = discord_bot.gateway.message(general, people.alice, "and who decided it?", reply_to=first.message.id)

    second = await discord_bot.api.wait_for(
        lambda: [m for m in bot_posts(discord_bot, general) if "show 2" in m.text and discord_bot.api.embeds.get(m.id)]
    )
    assert discord_bot.api.references[second[0].id] == reply.id
    follow_up = await load_ask(discord_bot, 2)
    assert (follow_up.follow_up_of, follow_up.colleagues, follow_up.question) == (1, ["bob"], "and who decided it?")
    # a message addressed to the bot (here: a reply to it) is a question, never memory
    async with discord_bot.db.session() as session:
        stored = (await session.execute(select(store_models.Message.platform_id))).scalars().all()
    assert reply.id not in stored
