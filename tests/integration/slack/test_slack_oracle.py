"""The oracle: a seeded random sequence of what people do on Slack (posts, thread replies and broadcasts, edits,
deletions, joins, leaves, archives, new private channels, conversions, the bot leaving, deactivation) is applied to
the fake Slack and delivered as events through the real bolt app. After every step, for every member, what their
memory search can return (clear: full text; fuzzy: sessions with their messages) equals what they can read on Slack
among the conversations askwith is in. Any difference is a divergence; there must be none.

Every message says `zq w<n>`: `w<n>` is unique per text version, so texts identify versions, and one clear search
for `zq` returns every message a member can see: deletions win over posts once the workspace holds `LIVE_CAP`
messages, which keeps that under the search's hit limit.

Message events (posts, edits, deletions) reach askwith as Slack can deliver them: late, shuffled and some twice
(`Mailbag`); memory is compared with Slack whenever none is still on its way.
"""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import pytest

from adapters.slack.services import SlackServices
from bot.memory.clear import MAX_LIMIT, ClearMemory
from bot.memory.embeddings import HashEmbedder
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.types import ClearQuery, FuzzyQuery, Viewer
from bot.memory.vector_index import VectorIndex
from bot.memory.visibility import resolve_viewer
from bot.platform.port import ChannelKind, ChatMessage
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.world import World
from tests.fakes.discord_chaos import Chaos
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_changes import SlackChanges, visible_messages
from tests.fakes.slack_shapes import ts_str
from tests.integration.slack.conftest import Slack


SEED = 14
LIVE_CAP = 80
HUMANS = ("UALICE", "UBOB", "UCAROL", "UDAVE", "UERIN")
VERSION = re.compile(r"\bw\d+\b")


@dataclass
class Oracle:
    fake: FakeSlackApi
    changes: SlackChanges
    rng: random.Random
    words: count = field(default_factory=lambda: count(1))
    new_channels: count = field(default_factory=lambda: count(1))
    deactivated: set[str] = field(default_factory=set)
    done: dict[str, int] = field(default_factory=dict)  # actions applied, by kind

    @property
    def world(self) -> World:
        return self.fake.world

    def text(self) -> str:
        return f"zq w{next(self.words)} about the launch plan"

    def channels(self) -> list[str]:
        """Channels askwith is in and people can still write to (not archived)."""
        bot = self.world.bot_id
        return sorted(
            c.id for c in self.world.channels.values() if bot in c.member_ids and c.id not in self.fake.archived
        )

    def writers(self, channel: str) -> list[str]:
        return [m for m in self.world.channels[channel].member_ids if m in HUMANS and m not in self.deactivated]

    def said(self, channel: str) -> list[ChatMessage]:
        tombstones = self.fake.timeline.tombstones
        return [
            m
            for m in self.world.messages[channel]
            if m.sender_id in HUMANS and m.id not in tombstones and m.text.startswith("zq")
        ]

    def ts(self, message: ChatMessage) -> str:
        return ts_str(self.fake.timeline.ts(message))

    def step(self) -> list[dict]:
        """One random action that applies now (drawn again when the first does not); returns the events Slack
        sends for it."""
        for _ in range(50):
            action = self.rng.choices(list(ACTIONS), weights=[w for w, _ in ACTIONS.values()])[0]
            if action in ("post", "reply") and sum(len(self.said(c)) for c in self.world.channels) >= LIVE_CAP:
                action = "delete"
            if events := ACTIONS[action][1](self):
                self.done[action] = self.done.get(action, 0) + 1
                return events
        return []


def _post(o: Oracle) -> list[dict]:
    channel = o.rng.choice(o.channels())
    writers = o.writers(channel)
    return [o.changes.post(channel, o.rng.choice(writers), o.text())] if writers else []


def _reply(o: Oracle) -> list[dict]:
    channel = o.rng.choice(o.channels())
    parents = [m for m in o.said(channel) if m.thread_id is None]
    writers = o.writers(channel)
    if not parents or not writers:
        return []
    parent = o.rng.choice(parents[-20:])
    broadcast = o.rng.random() < 0.2
    return [o.changes.post(channel, o.rng.choice(writers), o.text(), thread_ts=o.ts(parent), broadcast=broadcast)]


def _edit(o: Oracle) -> list[dict]:
    channel = o.rng.choice(o.channels())
    said = o.said(channel)
    return [o.changes.edit(channel, o.ts(o.rng.choice(said)), o.text())] if said else []


def _delete(o: Oracle) -> list[dict]:
    channel = o.rng.choice(o.channels())
    said = o.said(channel)
    return [o.changes.delete(channel, o.ts(o.rng.choice(said)))] if said else []


def _join(o: Oracle) -> list[dict]:
    channel = o.rng.choice(o.channels())
    outside = [m for m in HUMANS if m not in o.world.channels[channel].member_ids and m not in o.deactivated]
    return o.changes.join(channel, o.rng.choice(outside)) if outside else []


def _leave(o: Oracle) -> list[dict]:
    channel = o.rng.choice(o.channels())
    inside = o.writers(channel)
    return o.changes.leave(channel, o.rng.choice(inside)) if len(inside) > 1 else []


def _archive(o: Oracle) -> list[dict]:
    if o.fake.archived and o.rng.random() < 0.6:
        return [o.changes.archive(o.rng.choice(sorted(o.fake.archived)), archived=False)]
    channels = [c for c in o.channels() if c != "CCGENERAL"]
    return [o.changes.archive(o.rng.choice(channels))] if channels else []


def _new_private_channel(o: Oracle) -> list[dict]:
    members = o.rng.sample([m for m in HUMANS if m not in o.deactivated], 2)
    channel = f"GNEW{next(o.new_channels):04d}"
    return o.changes.create_channel(channel, channel.lower(), ChannelKind.PRIVATE, (o.world.bot_id, *members))


def _convert(o: Oracle) -> list[dict]:
    channel = o.rng.choice(o.channels())
    kind = o.world.channels[channel].kind
    return [o.changes.convert(channel, ChannelKind.PUBLIC if kind == ChannelKind.PRIVATE else ChannelKind.PRIVATE)]


def _bot_leaves(o: Oracle) -> list[dict]:
    channels = [c for c in o.channels() if c not in ("CCGENERAL", "GCLAUNCH")]
    return o.changes.leave(o.rng.choice(channels), o.world.bot_id) if channels else []


def _deactivate(o: Oracle) -> list[dict]:
    if o.deactivated:
        return []
    o.deactivated.add("UERIN")
    return [o.changes.deactivate("UERIN")]


ACTIONS = {
    "post": (30, _post),
    "reply": (14, _reply),
    "edit": (13, _edit),
    "delete": (11, _delete),
    "join": (9, _join),
    "leave": (8, _leave),
    "archive": (4, _archive),
    "new_private_channel": (4, _new_private_channel),
    "convert": (3, _convert),
    "bot_leaves": (2, _bot_leaves),
    "deactivate": (3, _deactivate),  # applies once
}


@dataclass
class Mailbag:
    """Slack's delivery as it can be: message events (posts, edits, deletions) held back for a few steps, then
    delivered shuffled, some twice (a retry). Other events flush the bag first, so who can read what changes in order
    while the messages' own events arrive in any order."""

    rng: random.Random
    held: list[dict] = field(default_factory=list)
    reordered: int = 0
    duplicated: int = 0

    @property
    def holding(self) -> bool:
        return bool(self.held)

    def deliver(self, events: list[dict], *, last: bool) -> list[dict]:
        if events and all(e.get("type") == "message" and e.get("subtype") in MESSAGE_SUBTYPES for e in events):
            self.held.extend(events)
            if self.rng.random() < 0.3:
                self.held.append(self.rng.choice(events))
                self.duplicated += 1
            if not last and len(self.held) < self.rng.randint(1, 6):
                return []
            events = []
        out, self.held = self.held, []
        before = list(out)
        self.rng.shuffle(out)
        self.reordered += out != before
        return out + events


MESSAGE_SUBTYPES = (None, "thread_broadcast", "message_changed", "message_deleted")


@pytest.fixture
async def live(
    services: SlackServices, sqlite_db: Database, settings: Settings, world: World, memory_dir: Path
) -> AsyncIterator[SlackServices]:
    assert services.ingest is not None
    # Re-indexed after every step: kept in memory, so no write waits for the disk (the same Chroma code).
    index = VectorIndex.from_settings(settings.replace(data_dir=memory_dir), embedder=HashEmbedder())
    indexer = SessionIndexer(sqlite_db, settings, SessionSummarizer(sqlite_db, None), index)
    services.ingest.indexer = indexer
    services.ingest.live.indexer = indexer
    services.ingest.live.reindex_delay_s = 0.0
    await services.ingest.mirror()
    for member in HUMANS:
        await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), member, True)
    yield services


async def remembered(services: SlackServices, viewer: Viewer) -> tuple[set[str], set[str], set[str]]:
    """(texts clear search can return, texts fuzzy search can return, message versions its summaries mention)."""
    assert services.ingest is not None and services.ingest.indexer is not None
    clear, fuzzy = ClearMemory(services.db), FuzzyMemory(services.db, services.ingest.indexer.index)
    hits = await clear.search(viewer, ClearQuery(keywords=("zq",), context_window=0, limit=MAX_LIMIT))
    assert len(hits) < MAX_LIMIT, "the hits filled the limit: lower LIVE_CAP"
    cleared = {h.message.text for h in hits}
    sessions = await fuzzy.search(viewer, FuzzyQuery(text="launch plan", top_k=10_000, expand=True))
    fuzzed = {m.text for h in sessions for m in h.messages if m.text.startswith("zq")}
    summarized = {v for h in sessions for v in VERSION.findall(h.summary)}
    return cleared, fuzzed, summarized


@pytest.mark.parametrize("steps", [100, pytest.param(1_000, marks=[pytest.mark.slow, pytest.mark.timeout(1800)])])
async def test_memory_equals_what_each_member_can_see_after_every_step(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World, steps: int
) -> None:
    for channel in ("CCGENERAL", "GCLAUNCH"):  # the oracle's own texts from the start
        for member in world.channels[channel].member_ids[:2]:
            world.add_message(channel, member, f"zq w0{channel} by {member} about the launch plan")
    fake_slack.timeline = type(fake_slack.timeline)(world)
    assert live.ingest is not None
    await live.ingest.run()
    oracle = Oracle(fake_slack, SlackChanges(fake_slack), random.Random(SEED))
    async with live.db.session() as session:
        viewers = {m: await resolve_viewer(session, live.ingest.workspace_id or 0, m) for m in HUMANS}
    divergences: list[str] = []
    applied = 0
    mailbag = Mailbag(random.Random(SEED + 1))
    for step in range(steps):
        events = oracle.step()
        applied += bool(events)
        for event in mailbag.deliver(events, last=step == steps - 1):
            assert (await slack.event(event)).status == 200
        await live.drain()
        await live.ingest.live.settle()
        if mailbag.holding:  # memory may lag what Slack shows until the late events arrive
            continue
        for member, viewer in viewers.items():
            truth = {t for t in visible_messages(fake_slack, member) if t.startswith("zq")}
            cleared, fuzzed, summarized = await remembered(live, viewer)
            versions = {v for t in truth for v in VERSION.findall(t)}
            for kind, got in (("clear", cleared), ("fuzzy", fuzzed)):
                if got != truth:
                    divergences.append(f"step {step} {member} {kind}: +{sorted(got - truth)} -{sorted(truth - got)}")
            if not summarized <= versions:
                divergences.append(f"step {step} {member} summaries mention {sorted(summarized - versions)}")
        assert not divergences, divergences[:5]
    assert mailbag.reordered and mailbag.duplicated, "the events were delivered in order and once each"
    assert applied == steps
    assert set(oracle.done) == set(ACTIONS), oracle.done  # every kind of change happened


MEMBERSHIP_EVENTS = {"member_joined_channel", "member_left_channel", "channel_left", "group_left", "user_change"}


@pytest.mark.parametrize("steps", [30, pytest.param(1_000, marks=[pytest.mark.slow, pytest.mark.timeout(3600)])])
async def test_memory_follows_membership_events_dropped_duplicated_and_reordered(
    live: SlackServices, slack: Slack, fake_slack: FakeSlackApi, world: World, steps: int
) -> None:
    """Membership events delivered twice (applied as once), late (after the next event) or never: after a
    reconciliation (the full listing) repairs what was dropped or late, memory equals what each member sees."""
    for channel in ("CCGENERAL", "GCLAUNCH"):
        for member in world.channels[channel].member_ids[:2]:
            world.add_message(channel, member, f"zq w0{channel} by {member} about the launch plan")
    fake_slack.timeline = type(fake_slack.timeline)(world)
    assert live.ingest is not None
    await live.ingest.run()
    oracle = Oracle(fake_slack, SlackChanges(fake_slack), random.Random(SEED + 1))
    chaos = Chaos(random.Random(SEED + 2))
    async with live.db.session() as session:
        viewers = {m: await resolve_viewer(session, live.ingest.workspace_id or 0, m) for m in HUMANS}
    for step in range(steps):
        delivered: list[dict] = []
        for event in oracle.step():
            if event["type"] in MEMBERSHIP_EVENTS:
                chaos.deliver(delivered.append, event)
            else:
                delivered.append(event)
        if chaos.unsynced:  # the reconciliation: late events arrive at last, then the full listing
            chaos.flush()
        for event in delivered:
            assert (await slack.event(event)).status == 200
        await live.drain()
        if chaos.unsynced:
            await live.ingest.mirror()
            chaos.unsynced = False
        await live.ingest.live.settle()
        for member, viewer in viewers.items():
            truth = {t for t in visible_messages(fake_slack, member) if t.startswith("zq")}
            cleared, fuzzed, _ = await remembered(live, viewer)
            assert cleared == truth and fuzzed == truth, (step, member, chaos.counts)
    if steps >= 500:
        assert min(chaos.counts.values()) > 0, chaos.counts
