"""Memory follows Slack within seconds: events delivered through the real bolt app change what members' searches
return (clear and fuzzy), and one bad object (a vanished thread, a revoked token) stops nothing else."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from adapters.slack import texts
from adapters.slack.services import SlackServices
from bot.asks.forget import count_workspace_rows
from bot.memory.clear import ClearMemory
from bot.memory.embeddings import HashEmbedder
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.types import ClearQuery, FuzzyQuery
from bot.memory.vector_index import VectorIndex
from bot.memory.visibility import resolve_viewer
from bot.platform.port import ChannelKind
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.ingest_status import IngestStatusStore, ObjectKind, ObjectStatus
from bot.store.user_tokens import UserTokenGrant, UserTokenStore
from bot.store.world import World
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_changes import SlackChanges
from tests.integration.slack.conftest import Slack, ack_text


HUMANS = ("UALICE", "UBOB", "UCAROL", "UDAVE", "UERIN")


@pytest.fixture
async def live(
    services: SlackServices, sqlite_db: Database, settings: Settings, world: World
) -> AsyncIterator[SlackServices]:
    """The Slack services with a session indexer (hash embedder), every member opted in, history ingested."""
    assert services.ingest is not None
    index = VectorIndex.from_settings(settings, embedder=HashEmbedder())
    indexer = SessionIndexer(sqlite_db, settings, SessionSummarizer(sqlite_db, None), index)
    services.ingest.indexer = indexer
    services.ingest.live.indexer = indexer
    await services.ingest.mirror()
    for member in HUMANS:
        await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), member, True)
    await services.ingest.run()
    yield services


async def deliver(slack: Slack, services: SlackServices, *events: dict) -> None:
    """Send events as Slack would and wait until the work they started (and the fuzzy re-index) is done."""
    for event in events:
        assert (await slack.event(event)).status == 200
    await services.drain()
    assert services.ingest is not None
    await services.ingest.live.settle()


async def search(services: SlackServices, who: str, *words: str, fuzzy: bool = False) -> list[str]:
    assert services.ingest is not None
    db, ws = services.db, services.ingest.workspace_id or 0
    async with db.session() as session:
        viewer = await resolve_viewer(session, ws, who)
    if fuzzy:
        assert services.ingest.indexer is not None
        hits = await FuzzyMemory(db, services.ingest.indexer.index).search(
            viewer, FuzzyQuery(text=" ".join(words), top_k=50, expand=True)
        )
        return [h.summary for h in hits] + [m.text for h in hits for m in h.messages]
    found = await ClearMemory(db).search(viewer, ClearQuery(keywords=words, context_window=0, limit=100))
    return [h.message.text for h in found]


# ---------------------------------------------------------------------- edits and deletions
async def test_an_edit_then_a_delete_leave_nothing_of_the_secret(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi
) -> None:
    changes = SlackChanges(fake_slack)
    posted = changes.post("CCGENERAL", "UBOB", "the deploy key is on the wiki")
    await deliver(slack, live, posted)
    assert await search(live, "UALICE", "deploy") == ["the deploy key is on the wiki"]
    await deliver(slack, live, changes.edit("CCGENERAL", posted["ts"], "my password is hunter2"))
    assert await search(live, "UALICE", "hunter2") == ["my password is hunter2"]
    assert await search(live, "UALICE", "wiki") == []
    assert any("hunter2" in t for t in await search(live, "UALICE", "password hunter2", fuzzy=True))
    await deliver(slack, live, changes.delete("CCGENERAL", posted["ts"]))
    assert await search(live, "UALICE", "hunter2") == []
    assert not any("hunter2" in t for t in await search(live, "UALICE", "password hunter2", fuzzy=True))
    async with live.db.session() as session:
        summaries = (await session.execute(select(models.SessionSummary.text))).scalars().all()
    assert not any("hunter2" in s for s in summaries)
    # A backfill from scratch reads the channel again: the tombstone keeps the message out.
    async with live.db.session() as session, session.begin():
        await session.execute(models.IngestCursor.__table__.delete())
    assert live.ingest is not None
    await live.ingest.run()
    assert await search(live, "UALICE", "hunter2") == []


async def test_thread_replies_broadcasts_and_a_deleted_parent(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi
) -> None:
    changes = SlackChanges(fake_slack)
    parent = changes.post("CCGENERAL", "UCAROL", "who owns the rollout checklist")
    reply = changes.post("CCGENERAL", "UDAVE", "erin owns the rollout", thread_ts=parent["ts"], broadcast=True)
    await deliver(slack, live, parent, reply)
    assert sorted(await search(live, "UBOB", "rollout")) == ["erin owns the rollout", "who owns the rollout checklist"]
    await deliver(slack, live, changes.edit("CCGENERAL", reply["ts"], "frank owns the rollout now"))
    await deliver(slack, live, changes.delete("CCGENERAL", parent["ts"]))  # a tombstone: the reply stays
    assert await search(live, "UBOB", "rollout") == ["frank owns the rollout now"]


# ---------------------------------------------------------------------- visibility
async def test_joins_leaves_and_the_bot_leaving(live: SlackServices, slack: Slack, fake_slack: FakeSlackApi) -> None:
    changes = SlackChanges(fake_slack)
    await deliver(slack, live, changes.post("GCLAUNCH", "UALICE", "launch budget is 40k"))
    assert await search(live, "UCAROL", "budget") == []
    await deliver(slack, live, *changes.join("GCLAUNCH", "UCAROL"))
    assert await search(live, "UCAROL", "budget") == ["launch budget is 40k"]
    await deliver(slack, live, *changes.leave("GCLAUNCH", "UCAROL"))
    assert await search(live, "UCAROL", "budget") == []
    await deliver(slack, live, *changes.leave("GCLAUNCH", fake_slack.world.bot_id))
    assert await search(live, "UALICE", "budget") == []  # askwith can no longer verify who reads it
    assert not any("budget" in t for t in await search(live, "UALICE", "launch budget", fuzzy=True))


async def test_archive_delete_convert_and_deactivation(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World
) -> None:
    changes = SlackChanges(fake_slack)
    await deliver(slack, live, changes.post("GCLAUNCH", "UALICE", "launch budget is 40k"))
    await deliver(slack, live, changes.archive("GCLAUNCH"))
    assert await search(live, "UBOB", "budget") == ["launch budget is 40k"]  # archived channels stay readable
    assert live.ingest is not None
    state = await IngestStatusStore(live.db).get(live.ingest.workspace_id or 0, ObjectKind.CHANNEL, "GCLAUNCH")
    assert state is not None and state.status == ObjectStatus.PAUSED
    await deliver(slack, live, changes.archive("GCLAUNCH", archived=False))
    assert await IngestStatusStore(live.db).get(live.ingest.workspace_id or 0, ObjectKind.CHANNEL, "GCLAUNCH") is None
    await deliver(slack, live, changes.convert("CCGENERAL", ChannelKind.PRIVATE))
    async with live.db.session() as session:
        kind = (
            await session.execute(select(models.Channel.kind).where(models.Channel.platform_id == "CCGENERAL"))
        ).scalar_one()
    assert kind == "private"
    assert await search(live, "UBOB", "offsite") != []
    await deliver(slack, live, changes.deactivate("UBOB"))
    assert await search(live, "UBOB", "offsite") == []
    await deliver(slack, live, changes.delete_channel("GCLAUNCH"))
    assert await search(live, "UALICE", "budget") == []


async def test_a_member_unknown_to_askwith_is_looked_up_alone(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World
) -> None:
    from bot.platform.port import Member

    world.add_member(Member("UZOE", "zoe", "Zoe"))
    changes = SlackChanges(fake_slack)
    before = len(fake_slack.calls_to("users.list"))
    await deliver(slack, live, *changes.join("CCGENERAL", "UZOE"), changes.post("CCGENERAL", "UZOE", "hi from zoe"))
    assert len(fake_slack.calls_to("users.list")) == before  # no full mirror
    assert fake_slack.calls_to("users.info")
    assert await search(live, "UZOE", "zoe") == ["hi from zoe"]


# ---------------------------------------------------------------------- revocation and consent
async def test_tokens_revoked_disables_the_token_unreads_its_dms_and_tells_the_member(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World, user_tokens: UserTokenStore
) -> None:
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", fake_slack.grant_user_token("UALICE"), ()))
    assert live.ingest is not None
    await live.ingest.run()
    assert await search(live, "UBOB", "around") != []  # Alice's DM with Bob, read with Alice's token
    await deliver(slack, live, SlackChanges(fake_slack).revoke_tokens("UALICE"))
    assert await search(live, "UBOB", "around") == []
    assert await user_tokens.grants("slack", world.id) == []
    assert any("stopped reading your DMs" in text for text in _dm_posts(fake_slack, "UALICE"))
    report = await live.ingest.run()  # the next run neither fails nor uses the token
    assert report.messages_added == 0


def _dm_posts(fake: FakeSlackApi, member: str) -> list[str]:
    """What the bot posted in its DM with a member."""
    return fake.posts(fake.world.dm(fake.world.bot_id, member).id)


async def test_opting_out_stops_reads_with_the_members_token_at_once(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World, user_tokens: UserTokenStore
) -> None:
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", fake_slack.grant_user_token("UALICE"), ()))
    assert live.ingest is not None
    await live.ingest.run()
    reply = ack_text(await slack.command("UALICE", "/askwith", "off"))
    assert "stops at once reading anything with your own token" in reply and "/askwith forget" in reply
    user_calls = len([c for c in fake_slack.calls if c.token_kind == "user"])
    world.add_message("DDALICEBOB", "UBOB", "are you there alice")
    await live.ingest.run()
    assert len([c for c in fake_slack.calls if c.token_kind == "user"]) == user_calls


async def test_forget_deletes_what_memory_holds_only_because_of_the_member(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World, user_tokens: UserTokenStore
) -> None:
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", fake_slack.grant_user_token("UALICE"), ()))
    assert live.ingest is not None
    await live.ingest.run()
    assert await search(live, "UBOB", "around") != []
    reply = ack_text(await slack.command("UALICE", "/askwith", "forget"))
    assert reply.startswith("Done: askwith deleted your memory: 3 conversation(s) only you could see"), reply
    assert "your memory is off" in reply
    assert not (await live.member_settings.get(await live.workspace(), "UALICE")).opted_in
    assert await search(live, "UBOB", "around") == []
    assert await search(live, "UALICE", "offsite") != []  # #general stays
    assert await user_tokens.grants("slack", world.id) == []
    assert ack_text(await slack.command("UALICE", "/askwith", "disconnect")) == texts.disconnected(False)


async def test_disconnect_revokes_the_token_at_slack_and_forgets_it(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World, user_tokens: UserTokenStore
) -> None:
    token = fake_slack.grant_user_token("UALICE")
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", token, ()))
    assert ack_text(await slack.command("UALICE", "/askwith", "disconnect")) == texts.disconnected(True)
    assert fake_slack.calls_to("auth.revoke") and token in fake_slack.revoked_tokens
    assert await user_tokens.grants("slack", world.id) == []


async def test_app_uninstalled_leaves_nothing_of_the_workspace(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World, user_tokens: UserTokenStore
) -> None:
    await user_tokens.save(UserTokenGrant("slack", world.id, "UALICE", fake_slack.grant_user_token("UALICE"), ()))
    assert live.ingest is not None
    await live.ingest.run()
    assert await search(live, "UBOB", "offsite") != [] and await search(live, "UBOB", "around") != []
    workspace_id = live.ingest.workspace_id or 0
    await deliver(slack, live, {"type": "app_uninstalled"})
    counts = await count_workspace_rows(live.db, workspace_id, ("slack", world.id))
    assert counts["message"] == 0 and all(n == 0 for n in counts.values()), counts
    assert await user_tokens.grants("slack", world.id) == []


# ---------------------------------------------------------------------- events in any order
async def test_an_edit_delivered_before_its_post_leaves_the_edit(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi
) -> None:
    changes = SlackChanges(fake_slack)
    posted = changes.post("CCGENERAL", "UBOB", "zz9 token is tok-1234")
    edited = changes.edit("CCGENERAL", posted["ts"], "zz9 token is in the vault")
    await deliver(slack, live, edited, posted, posted)  # the edit first, then the post and a retry of it
    assert await search(live, "UALICE", "zz9") == ["zz9 token is in the vault"]


async def test_edits_in_any_order_leave_the_newest_and_a_late_post_stays_deleted(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi
) -> None:
    changes = SlackChanges(fake_slack)
    posted = changes.post("CCGENERAL", "UBOB", "zz8 standup moves to room alpha")
    second = changes.edit("CCGENERAL", posted["ts"], "zz8 standup moves to room beta")
    third = changes.edit("CCGENERAL", posted["ts"], "zz8 standup moves to room gamma")
    for event in (third, posted, second, posted):  # one after the other: each is handled before the next
        await deliver(slack, live, event)
    assert await search(live, "UALICE", "zz8") == ["zz8 standup moves to room gamma"]
    gone = changes.post("CCGENERAL", "UCAROL", "lunch order qq7")
    for event in (changes.delete("CCGENERAL", gone["ts"]), gone, gone):
        await deliver(slack, live, event)
    assert await search(live, "UALICE", "qq7") == []


async def test_the_agents_hidden_channel_is_never_memory(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World
) -> None:
    """A person writing in askwith's hidden channel (an admin reading the agents' talk) is not memory, even before
    this process has looked the channel up (it is known by its name then)."""
    from bot.platform.port import Channel

    world.add_channel(Channel("GAGENTS", "askwith-agents", ChannelKind.PRIVATE, ("UBOB", world.bot_id)))
    changes = SlackChanges(fake_slack)
    await deliver(slack, live, changes.post("GAGENTS", "UBOB", "agents talk: the rollout budget is 40k"))
    await deliver(slack, live, changes.post("CCGENERAL", "UBOB", "the rollout starts monday"))
    assert await search(live, "UBOB", "rollout") == ["the rollout starts monday"]
