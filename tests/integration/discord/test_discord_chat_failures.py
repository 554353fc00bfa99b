"""In-chat asks when Discord pushes back, as it does: 429 with retry_after on the status edits, the status message
deleted mid-ask (404/10008), an interaction Discord forgot (404/10062), the form's token expired (401/50027); and
the answer's feedback buttons and transcript link. Also: a mention in a message is remembered with the name beside
the id, so memory finds "Bob" as well as `<@id>`."""

from __future__ import annotations

import asyncio

from bot.asks.feedback import feedback_tally, vote_of
from bot.memory.clear import ClearMemory
from bot.memory.types import ClearQuery
from bot.memory.visibility import resolve_viewer
from tests.fakes.asks import QUESTION
from tests.integration.discord.chat_helpers import answered, bot_posts, buttons_of
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_chat_asks import channel, load_ask, ready, start_thread


def mention_ask(bot: DiscordHarness, people: People, where: str) -> None:
    bot.gateway.message(where, people.alice, f"<@{bot.world.bot_id}> ask <@{people.id('bob')}> {QUESTION}")


async def test_status_edits_wait_out_429s_and_the_answer_still_lands(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")
    api.rate_limit("PATCH", rf"/channels/{general}/messages/\d+", retry_after=0.4, times=2)

    mention_ask(discord_bot, people, general)

    status = await answered(discord_bot, general)
    assert len(api.rate_limited) == 2 and "Bluebird" in status.shown
    limited_then_retried = [c for c in status.edits if c in api.rate_limited]
    assert limited_then_retried and status.edits[-1] not in api.rate_limited
    assert status.edits[-1].at - limited_then_retried[-1].at >= 0.39, "retry_after was honoured"


async def test_a_deleted_status_message_gets_the_answer_as_a_new_message(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")
    mention_ask(discord_bot, people, general)
    status = await api.wait_for(lambda: bot_posts(discord_bot, general))
    api.delete_message(status[0])  # a moderator removes it: edits now answer 404/10008

    answer = await answered(discord_bot, general)
    assert answer.message.id != status[0].id and "Bluebird" in answer.shown
    gone = api.requests("PATCH", rf"/channels/{general}/messages/{status[0].id}")
    assert gone, "an edit was tried and refused"
    assert (await load_ask(discord_bot, 1)).final_message_id == answer.message.id


async def test_a_forgotten_interaction_and_an_expired_form_token(discord_bot: DiscordHarness, people: People) -> None:
    api = discord_bot.api
    general = channel(discord_bot, "general")
    thread = start_thread(discord_bot, people, general)
    await ready(discord_bot, people)
    target = api.replies(api.public_threads()[thread])[-1]

    # Discord forgot the right-click (its 3 s passed): the form cannot open, and nothing else happens
    forgotten = discord_bot.gateway.context_menu("Ask about this thread", people.alice, target)
    api.forget_interaction(forgotten)
    await api.wait_for(lambda: api.requests("POST", rf"/interactions/\d+/{forgotten}/callback"))
    assert not [c for c in api.callbacks if c.token == forgotten]

    # the form's token expires while the ask runs: the status edits continue as the bot's own message
    opened = discord_bot.gateway.context_menu("Ask about this thread", people.alice, target)
    modal = (await api.wait_for(lambda: [c for c in api.callbacks if c.token == opened]))[0]
    submitted = discord_bot.gateway.submit(
        modal.data["custom_id"], people.alice, thread,
        texts={"askwith:thread:question": QUESTION}, users={"askwith:thread:colleagues": [people.bob]},
    )  # fmt: skip
    await api.wait_for(lambda: api.requests("PATCH", rf"/webhooks/\d+/{submitted}/messages/@original"))
    api.expire(submitted)  # as 15 minutes later
    status = await answered(discord_bot, thread, token=submitted)
    assert status.message.id == api.originals[submitted] and "Bluebird" in status.shown
    assert status.edits[-1].path.startswith("/channels/"), "after 50027 the bot edits it as its own message"


async def test_feedback_buttons_record_votes_and_the_transcript_button_links(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    svc = discord_bot.runtime.services
    svc.asks.transcript_link = lambda ask_id, handle: f"https://askwith.example/transcripts/{ask_id}?as={handle}"
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")
    mention_ask(discord_bot, people, general)
    status = await answered(discord_bot, general)
    await load_ask(discord_bot, 1)

    link, up, down = buttons_of(discord_bot, status.message.id)
    assert (link["label"], link["url"]) == ("Transcript", "https://askwith.example/transcripts/1?as=alice")
    voted = discord_bot.gateway.press(down["custom_id"], people.alice, status.message.id)
    thanks = await api.wait_for(lambda: api.followups_for(voted))
    assert thanks[0].ephemeral and thanks[0].content == "Thanks: the \U0001f44e is noted with this ask."
    again = discord_bot.gateway.press(up["custom_id"], people.alice, status.message.id)
    await api.wait_for(lambda: api.followups_for(again))
    assert await vote_of(svc.db, 1, "alice") == 1 and (await feedback_tally(svc.db, 1)).down == 0


async def test_a_mention_is_remembered_with_the_name_so_memory_finds_bob(
    discord_bot: DiscordHarness, people: People
) -> None:
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")
    said = discord_bot.gateway.message(general, people.alice, f"<@{people.id('bob')}>, can you take the demo?")

    async with discord_bot.db.session() as session:
        viewer = await resolve_viewer(session, discord_bot.runtime.services.asks.workspace_id, "alice")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while True:  # stored within moments of MESSAGE_CREATE (on_message runs as its own task)
        query = ClearQuery(keywords=("Bob",), context_window=0, limit=20)
        texts = {h.message.id: h.message.text for h in await ClearMemory(discord_bot.db).search(viewer, query)}
        if said.id in texts or loop.time() > deadline:
            break
        await asyncio.sleep(0.05)
    assert texts.get(said.id) == f"@Bob (<@{people.id('bob')}>), can you take the demo?"


async def test_when_another_process_posts_the_answer_the_status_says_how_the_ask_ended(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    discord_bot.runtime.services.asks.llm.backend.latency_s = 0.3  # type: ignore[attr-defined]
    await ready(discord_bot, people)
    general = channel(discord_bot, "general")
    mention_ask(discord_bot, people, general)
    status = (await api.wait_for(lambda: bot_posts(discord_bot, general)))[0]
    answers = discord_bot.runtime.services.port.answers
    assert answers is not None
    await api.wait_for(lambda: answers.slots)  # the status message is registered right after it is posted
    answers.slots.clear()  # as if a worker in another process ran the ask: it knows no status message

    answer = await answered(discord_bot, general)
    assert answer.message.id != status.id
    closed = await api.wait_for(lambda: "The answer is in its own message." in api.find_message(status.id).text)
    assert closed and not buttons_of(discord_bot, status.id), "no Cancel left on a finished ask"
    assert api.find_message(status.id).text == f"<@{people.id('alice')}>: Answered. The answer is in its own message."
