"""`/askwith show`: the member's panel, only for them: settings as controls (memory button, share select, excluded
channels select) that change what is stored through the same core functions as the text commands, their recent
asks, and what their agent shared with whom."""

from __future__ import annotations

from sqlalchemy import func, select

from bot.asks.forget import count_workspace_rows
from bot.platform.port import SharePolicy
from bot.store import models
from tests.fakes.asks import QUESTION
from tests.integration.discord.chat_helpers import answered
from tests.integration.discord.conftest import DiscordHarness, People
from tests.integration.discord.test_discord_chat_asks import channel, load_ask, ready


STRING_SELECT, CHANNEL_SELECT = 3, 8


def controls(bot: DiscordHarness, message_id: str) -> dict[int, dict]:  # type: ignore[type-arg]
    """The panel's components by type (2 button, 3 string select, 8 channel select)."""
    return {c["type"]: c for row in bot.api.components[message_id] for c in row["components"]}


async def open_panel(bot: DiscordHarness, member: object) -> str:
    token = bot.gateway.slash("askwith", member, subcommand="show")  # type: ignore[arg-type]
    panel = await bot.api.wait_for(lambda: [f for f in bot.api.followups_for(token) if bot.api.embeds.get(f.id)])
    assert panel[0].ephemeral, "only the member sees their panel"
    return panel[0].id


async def test_the_panel_changes_settings_and_shows_asks_and_what_the_agent_shared(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    svc = discord_bot.runtime.services
    await ready(discord_bot, people)
    discord_bot.gateway.dm(people.alice, f"ask <@{people.id('bob')}> {QUESTION}")
    await answered(discord_bot, api.dm_with(people.id("alice")).id)
    await load_ask(discord_bot, 1)

    alice_panel = await open_panel(discord_bot, people.alice)
    titles = [e["title"] for e in api.embeds[alice_panel]]
    assert titles == ["Your askwith settings", "Your recent asks", "What your agent shared, with whom"]
    assert "#1 (`askwith transcripts show 1`)" in api.embeds[alice_panel][1]["description"]
    bob_panel = await open_panel(discord_bot, people.bob)
    shared = api.embeds[bob_panel][2]["description"]
    assert (
        "to alice and the admins who read the agents' thread, shared automatically, on \u201cWhat is the project code"
        " name"
        in shared
        and "14 March" in shared
    )

    # share: auto -> ask, through the select
    share = controls(discord_bot, bob_panel)[STRING_SELECT]
    assert [o["value"] for o in share["options"] if o.get("default")] == ["auto"]
    discord_bot.gateway.press(share["custom_id"], people.bob, bob_panel, values=["ask"], component_type=STRING_SELECT)
    await api.wait_for(lambda: "`ask`" in api.embeds[bob_panel][0]["description"])
    assert (await svc.member_settings.get(svc.workspace, people.id("bob"))).share is SharePolicy.ASK

    # exclude #launch, through the channel select
    launch = channel(discord_bot, "launch")
    picker = controls(discord_bot, bob_panel)[CHANNEL_SELECT]
    resolved = {"channels": {launch: {"id": launch, "type": 0, "name": "launch", "permissions": "0"}}}
    discord_bot.gateway.press(
        picker["custom_id"], people.bob, bob_panel, values=[launch], component_type=CHANNEL_SELECT, resolved=resolved
    )
    await api.wait_for(lambda: f"<#{launch}>" in api.embeds[bob_panel][0]["description"])
    assert (await svc.member_settings.get(svc.workspace, people.id("bob"))).excluded_channels == (launch,)
    defaults = controls(discord_bot, bob_panel)[CHANNEL_SELECT]["default_values"]
    assert [(str(d["id"]), d["type"]) for d in defaults] == [(launch, "channel")]

    # memory off, through the button; the panel says what that does
    memory = controls(discord_bot, bob_panel)[2]
    assert memory["label"] == "Memory: on (turn off)"
    discord_bot.gateway.press(memory["custom_id"], people.bob, bob_panel)
    await api.wait_for(lambda: controls(discord_bot, bob_panel)[2]["label"] == "Memory: off (turn on)")
    assert not (await svc.member_settings.get(svc.workspace, people.id("bob"))).opted_in
    assert api.ephemeral[bob_panel]["content"].startswith("askwith stops at once")


async def test_forget_deletes_the_members_asks_and_leaves_colleagues_alone(
    discord_bot: DiscordHarness, people: People
) -> None:
    api = discord_bot.api
    svc = discord_bot.runtime.services
    await ready(discord_bot, people)
    discord_bot.gateway.dm(people.alice, f"ask <@{people.id('bob')}> {QUESTION}")
    await answered(discord_bot, api.dm_with(people.id("alice")).id)
    await load_ask(discord_bot, 1)
    workspace_id = svc.ingest.workspace_id or 0
    before = await _counts(discord_bot, workspace_id)
    assert before["ask"] == 1 and before["message"] > 0, before
    bobs = await _messages_read_by(discord_bot, people.id("bob"))

    token = discord_bot.gateway.slash("askwith", people.alice, subcommand="forget")  # type: ignore[arg-type]
    reply = await api.wait_for(lambda: [f for f in api.followups_for(token) if api.shown(f.id)])
    assert reply[0].ephemeral and api.shown(reply[0].id).startswith("Done: askwith deleted your memory"), reply
    assert "1 ask(s) of yours" in api.shown(reply[0].id)
    after = await _counts(discord_bot, workspace_id)
    assert after["ask"] == 0 and after["turn"] == 0 and after["member"] == before["member"], after
    assert not (await svc.member_settings.get(svc.workspace, people.id("alice"))).opted_in
    assert (await svc.member_settings.get(svc.workspace, people.id("bob"))).opted_in
    assert await _messages_read_by(discord_bot, people.id("bob")) == bobs > 0  # bob's memory is untouched


async def _counts(bot: DiscordHarness, workspace_id: int) -> dict[str, int]:
    svc = bot.runtime.services
    return await count_workspace_rows(svc.db, workspace_id, (svc.workspace.platform, svc.workspace.external_id))


async def _messages_read_by(bot: DiscordHarness, member_id: str) -> int:
    reads = (
        select(models.Membership.channel_id)
        .join(models.Member, models.Member.id == models.Membership.member_id)
        .where(models.Member.platform_id == member_id)
    )
    async with bot.runtime.services.db.session() as session:
        query = select(func.count()).select_from(models.Message).where(models.Message.channel_id.in_(reads))
        return int(await session.scalar(query))
