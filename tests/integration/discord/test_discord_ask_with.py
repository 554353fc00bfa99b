"""`/ask-with` end to end through the real discord.py client and command tree, against the fake Discord API, with
the scripted model: deferred within Discord's 3 s, the agents' talk in a private thread, the answer as an
ephemeral follow-up with its transcript reference."""

from __future__ import annotations

from dataclasses import replace

from bot.platform.port import Member
from tests.fakes.asks import QUESTION
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_routes import FollowUp
from tests.fakes.discord_shapes import PRIVATE_THREAD, VIEW_CHANNEL
from tests.integration.discord.conftest import DiscordHarness, People


DEFERRED = 5


async def settings_answer(api: FakeDiscordApi, token: str) -> FollowUp:
    """The answer to `/askwith on|off|share|...`: a follow-up, after the interaction was deferred."""
    return (await api.wait_for(lambda: api.followups_for(token)))[0]


async def opt_in(bot: DiscordHarness, *members: object) -> None:
    for member in members:
        token = bot.gateway.slash("askwith", member, subcommand="on")  # type: ignore[arg-type]
        await settings_answer(bot.api, token)


def ask(bot: DiscordHarness, requester: Member, question: str, *, colleague: Member) -> str:
    return bot.gateway.slash("ask-with", requester, {"question": question}, users={"colleague": colleague})


async def test_settings_commands_defer_before_they_answer(discord_bot: DiscordHarness, people: People) -> None:
    api = discord_bot.api
    for subcommand, options, said in [("on", {}, "Memory: on"), ("share", {"policy": "ask"}, "Sharing: `ask`")]:
        token = discord_bot.gateway.slash("askwith", people.bob, options, subcommand=subcommand)
        answer = await settings_answer(api, token)
        first = next(c for c in api.callbacks if c.token == token)
        assert (first.type, first.ephemeral) == (DEFERRED, True), subcommand
        assert answer.ephemeral and said in api.shown(answer.id), (subcommand, api.shown(answer.id))


async def test_askwith_timezone_sets_refuses_and_clears_the_members_zone(
    discord_bot: DiscordHarness, people: People
) -> None:
    """Discord gives no member's zone: the workspace's, until the member picks one."""
    api, zone = discord_bot.api, discord_bot.runtime.services.settings.timezone
    for options, said in [
        ({}, f"{zone} (the workspace's"),
        (
            {"zone": "america/los_angeles"},
            "Saved. **Your time zone** for deadlines and times: America/Los_Angeles (you",
        ),
        ({"zone": "America/Los_Angels"}, "Did you mean America/Los_Angeles?"),
        ({}, "America/Los_Angeles (you chose it"),
        ({"zone": "auto"}, f"Saved. **Your time zone** for deadlines and times: {zone} (the workspace's"),
    ]:
        token = discord_bot.gateway.slash("askwith", people.bob, options, subcommand="timezone")
        answer = await settings_answer(api, token)
        assert answer.ephemeral and said in api.shown(answer.id), (options, api.shown(answer.id))


async def test_ask_with_defers_talks_in_a_private_thread_and_follows_up_with_the_answer(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    await opt_in(discord_bot, people.alice, people.bob)
    await discord_bot.runtime.ingest.run()

    token = ask(discord_bot, people.alice, QUESTION, colleague=people.bob)

    answer = await api.wait_for(lambda: [f for f in api.followups_for(token) if "transcripts show" in f.content])
    first = next(c for c in api.callbacks if c.token == token)
    assert (first.type, first.ephemeral) == (DEFERRED, True)
    assert api.calls.index(next(c for c in api.calls if token in c.path)) < api.calls.index(
        next(c for c in api.calls if c.path.startswith("/guilds/") and c.method == "POST")
    ), "the interaction is answered before any slow work starts"
    notes = [f.content for f in api.followups_for(token)]
    assert notes[0].startswith("\u23f3 Your agent is asking Bob's agent")
    assert len(answer) == 1 and answer[0].ephemeral
    shown = api.shown(answer[0].id)  # the answer's embed, as in chat, only for the asker
    assert "Bluebird" in shown and "14 March" in shown and api.embeds[answer[0].id][0]["title"] == "Answer"

    # the agents' channel: created hidden from @everyone; one private thread per ask holds the talk
    created = api.requests("POST", r"/guilds/\d+/channels")[0].body
    everyone = next(o for o in created["permission_overwrites"] if str(o["id"]) == api.guild_id)
    assert int(everyone["deny"]) & VIEW_CHANNEL
    thread_call = api.requests("POST", r"/channels/\d+/threads")[0]
    assert thread_call.body["type"] == PRIVATE_THREAD and thread_call.body["invitable"] is False
    thread_id = next(t for t in api.extras.threads.values() if t.type == PRIVATE_THREAD).id
    agents_channel = api.extras.threads[thread_id].parent_id
    talk = [m.text for m in discord_bot.world.messages[agents_channel] if m.thread_id == thread_id]
    assert talk[0].startswith("ask #") and QUESTION in talk[0]
    assert [t.split("'s agent")[0] for t in talk[1:]] == ["Alice", "Bob"]  # Bob's agent filled what Alice's missed
    # Bob is told by DM what his agent shared, and with whom
    bob_dm = api.dm_with(people.id("bob")).id
    assert any("Alice" in m.text and "14 March" in m.text for m in discord_bot.world.messages[bob_dm])


async def test_ask_with_names_people_by_id_so_a_username_changed_since_the_mirror_still_finds_them(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    await opt_in(discord_bot, people.alice, people.bob)
    await discord_bot.runtime.ingest.run()
    renamed_alice, renamed_bob = replace(people.alice, name="alice.new"), replace(people.bob, name="bobby")

    token = ask(discord_bot, renamed_alice, QUESTION, colleague=renamed_bob)

    answer = await api.wait_for(lambda: [f for f in api.followups_for(token) if "transcripts show" in f.content])
    assert "Bluebird" in api.shown(answer[0].id) and "14 March" in api.shown(answer[0].id)
    ask_row = await discord_bot.runtime.services.asks.load(1)
    assert (ask_row.requester, ask_row.colleagues) == ("alice", ["bob"])


async def test_question_may_name_colleagues_as_mentions(discord_bot: DiscordHarness, people: People) -> None:
    api = discord_bot.api
    await opt_in(discord_bot, people.alice, people.bob)
    await discord_bot.runtime.ingest.run()

    token = discord_bot.gateway.slash("ask-with", people.alice, {"question": f"<@{people.id('bob')}> {QUESTION}"})

    answer = await api.wait_for(lambda: [f for f in api.followups_for(token) if "transcripts show" in f.content])
    assert "Bluebird" in api.shown(answer[0].id) and "14 March" in api.shown(answer[0].id)
    assert api.followups_for(token)[0].content.startswith(f"\u23f3 Your agent is asking <@{people.id('bob')}>'s")
