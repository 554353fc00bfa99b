"""SlackPort against the fake Slack Web API through the real AsyncWebClient."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from adapters.slack.port import AGENTS_CHANNEL_NAME, SlackPort
from bot.errors import ChatPlatformError
from bot.platform.port import ChannelKind
from bot.store.chat_store import WorkspaceKey
from bot.store.member_settings import MemberSettingsStore
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from memory_ingest.worker import IngestWorker
from tests.fakes.slack_api import FakeSlackApi


T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _chatter(world: World, channel_id: str, count: int) -> list[str]:
    senders = [m for m in world.channels[channel_id].member_ids if m != world.bot_id]
    texts = [f"message number {i}" for i in range(count)]
    for i, text in enumerate(texts):
        world.add_message(channel_id, senders[i % len(senders)], text, ts=T0 + timedelta(minutes=i))
    return texts


async def _read_all(port: SlackPort, channel_id: str, *, limit: int, cursor: str | None = None) -> tuple[list, str]:
    seen, pages = [], 0
    while True:
        page = await port.read_history(channel_id, cursor=cursor, limit=limit)
        seen += page.messages
        cursor, pages = page.cursor, pages + 1
        if not page.has_more:
            return seen, cursor


async def _connect(port: SlackPort, user_tokens: UserTokenStore, world: World, member: str, token: str) -> None:
    """A member who turned memory on and granted their token (askwith reads with no one else's)."""
    await user_tokens.save(UserTokenGrant("slack", world.id, member, token, ("im:history",)))
    await IngestWorker(port, user_tokens.db).mirror()
    await MemberSettingsStore(user_tokens.db).set_opted_in(WorkspaceKey("slack", world.id), member, True)


async def test_members_and_the_bots_channels(port: SlackPort, world: World) -> None:
    members = {m.id: m for m in await port.list_members()}
    assert set(members) == set(world.members)
    assert members["UBOB"].name == "bob" and members["UBOB"].display_name == "Bob Okafor"
    assert members[world.bot_id].is_bot
    channels = {c.id: c for c in await port.list_channels()}
    # A bot token sees only the conversations the bot is in: the two channels, none of the members' DMs.
    assert set(channels) == {"CCGENERAL", "GCLAUNCH"}
    assert channels["GCLAUNCH"].kind == ChannelKind.PRIVATE
    assert set(channels["GCLAUNCH"].member_ids) == {"UALICE", "UBOB", "UDAVE", world.bot_id}


async def test_a_members_user_token_adds_their_dms(
    port: SlackPort, fake_slack: FakeSlackApi, user_tokens: UserTokenStore, world: World
) -> None:
    await _connect(port, user_tokens, world, "UALICE", fake_slack.grant_user_token("UALICE"))
    channels = {c.id: c for c in await port.list_channels()}
    assert {"DDALICEBOB", "DDALICECAROL", "DDALICEDAVE"} <= set(channels)
    assert "DDBOBCAROL" not in channels  # Alice is not in it
    assert channels["DDALICEBOB"].member_ids == ("UALICE", "UBOB")
    page = await port.read_history("DDALICEBOB")
    assert [m.text[:20] for m in page.messages] == ["Bob, are you around ", "Thursday I'm at the "]
    assert {c.token_kind for c in fake_slack.calls_to("conversations.history")} == {"user"}


async def test_a_user_token_without_the_history_scope_is_refused(
    port: SlackPort, fake_slack: FakeSlackApi, user_tokens: UserTokenStore, world: World
) -> None:
    token = fake_slack.grant_user_token("UALICE", frozenset({"im:read", "mpim:read"}))
    await _connect(port, user_tokens, world, "UALICE", token)
    await port.list_channels()
    with pytest.raises(ChatPlatformError) as info:
        await port.read_history("DDALICEBOB")
    assert (info.value.call, info.value.reason) == ("conversations.history", "missing_scope")


async def test_history_pages_oldest_first_and_resumes_from_its_cursor(
    port: SlackPort, fake_slack: FakeSlackApi, world: World
) -> None:
    texts = _chatter(world, "CCGENERAL", 23)
    fake_slack.timeline = type(fake_slack.timeline)(world)
    seen, cursor = await _read_all(port, "CCGENERAL", limit=5)
    # One Slack page per read (newest pages first, each page oldest first): everything, once.
    assert [m.text for m in sorted(seen, key=lambda m: m.ts)][3:] == texts
    assert len({m.id for m in seen}) == len(seen) == 26
    assert len(fake_slack.calls_to("conversations.history")) == 6
    # Nothing new: resuming from the stored cursor reads nothing; one new message: exactly that one.
    assert (await port.read_history("CCGENERAL", cursor=cursor)).messages == []
    world.add_message("CCGENERAL", "UCAROL", "one more", ts=datetime.now(UTC))
    fake_slack.timeline = type(fake_slack.timeline)(world)
    assert [m.text for m in (await port.read_history("CCGENERAL", cursor=cursor)).messages] == ["one more"]


async def test_a_429_in_the_middle_of_a_backfill_loses_and_repeats_nothing(
    port: SlackPort, fake_slack: FakeSlackApi, world: World
) -> None:
    _chatter(world, "CCGENERAL", 650)  # seven pages of 100
    fake_slack.timeline = type(fake_slack.timeline)(world)
    fake_slack.rate_limit("conversations.history", after=1, times=2, retry_after=0)
    first = await port.read_history("CCGENERAL", limit=100)
    # The process stops here; a new one resumes from the stored cursor and meets another 429 on its way.
    fake_slack.rate_limit("conversations.history", after=2, times=1, retry_after=1)
    rest, _ = await _read_all(SlackPort(port.client), "CCGENERAL", limit=100, cursor=first.cursor)
    read = sorted(first.messages + rest, key=lambda m: m.ts)
    ids = [m.id for m in read]
    assert len(ids) == len(set(ids)) == 653
    assert [m.text for m in read][3:] == [f"message number {i}" for i in range(650)]
    verbs = [c.verb for c in fake_slack.calls_to("conversations.history")]
    assert verbs.count("GET -> 429") == 1
    assert verbs.count("GET") == 7  # one call per page of 100, none repeated


async def test_replies_and_the_bots_own_posts(port: SlackPort, fake_slack: FakeSlackApi, world: World) -> None:
    parent_id = await port.post("CCGENERAL", "bot announcement")
    root = fake_slack.timeline.add("CCGENERAL", "UALICE", "who is in for lunch?", None)
    for who in ("UBOB", "UCAROL", "UDAVE"):
        fake_slack.timeline.add("CCGENERAL", who, f"{who} is in", root)
    page = await port.read_history("CCGENERAL")
    texts = [m.text for m in page.messages]
    # The bot's post is history (ingestion drops bots' posts; the core looks for its own answers in history).
    assert next(m for m in page.messages if m.text == "bot announcement").sender_id == world.bot_id
    assert "who is in for lunch?" in texts
    parent = next(m for m in page.messages if m.text == "who is in for lunch?")
    assert parent.reply_count == 3
    first = await port.read_replies("CCGENERAL", parent.id, limit=2)
    assert [m.text for m in first.messages] == ["UBOB is in", "UCAROL is in"] and first.has_more
    assert all(m.thread_id == parent.id for m in first.messages)
    second = await port.read_replies("CCGENERAL", parent.id, cursor=first.cursor, limit=2)
    assert [m.text for m in second.messages] == ["UDAVE is in"] and not second.has_more
    assert parent_id.startswith("CCGENERAL:")


async def test_hidden_threads_live_in_one_private_channel_the_bot_creates(
    port: SlackPort, fake_slack: FakeSlackApi, world: World
) -> None:
    first = await port.create_hidden_thread("ask #1")
    second = await port.create_hidden_thread("ask #2")
    assert first.channel_id == second.channel_id
    channel = world.channels[first.channel_id]
    assert channel.name == AGENTS_CHANNEL_NAME and channel.kind == ChannelKind.PRIVATE
    assert channel.member_ids == (world.bot_id,)
    await port.post(first.channel_id, "alice's agent: hello", thread_id=first.thread_id)
    assert fake_slack.posts(first.channel_id) == ["ask #1", "ask #2", "alice's agent: hello"]
    assert len(fake_slack.calls_to("conversations.create")) == 1
    assert first.channel_id not in {c.id for c in await port.list_channels()}
    # A fresh process finds the channel instead of creating a second one.
    again = SlackPort(port.client)
    assert (await again.create_hidden_thread("ask #3")).channel_id == first.channel_id


async def test_dm_and_ephemeral(port: SlackPort, fake_slack: FakeSlackApi, world: World) -> None:
    dm = await port.open_dm("UBOB")
    await port.post(dm, "hi Bob")
    assert fake_slack.posts(dm) == ["hi Bob"]
    await port.post_ephemeral("CCGENERAL", "UBOB", "only for you")
    assert [(e.user, e.text) for e in fake_slack.ephemerals] == [("UBOB", "only for you")]
    info = await port.workspace_info()
    assert (info.id, info.name) == (world.id, world.name)
