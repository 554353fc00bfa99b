"""The oracle: a seeded random sequence of posts, thread replies, edits, deletions, bulk deletions, joins, leaves,
role, role-permission and overwrite changes, private threads and their members, archives, applied to the fake Discord
and delivered to the real discord.py client as gateway events. After every step, for every member, what clear memory
and fuzzy memory can return equals what the member can see on Discord at that moment (`tests.fakes.discord_oracle`).

Message events (creates, edits, deletions) of about half the steps are held back and delivered later, shuffled and
some twice, as a gateway resuming after a drop replays them; memory is compared whenever none is still held.

100 steps in the default suite, 1,000 in the slow one (`-m slow`); ASKWITH_ORACLE_SEED changes the seed. Then again
with visibility events dropped, duplicated and reordered (`tests.fakes.discord_chaos`), a reconciliation repairing
what was dropped or late: 40 steps by default, 1,000 in the slow suite.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import select

from adapters.discord.bot import DiscordRuntime, start_discord
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.embeddings import HashEmbedder
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.types import ClearQuery, FuzzyQuery, Viewer
from bot.memory.vector_index import VectorIndex
from bot.memory.visibility import resolve_viewer
from bot.platform.port import ChatMessage, Member
from bot.settings import Settings
from bot.store import models
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import World
from tests.fakes.asks import ask_factory
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_chaos import Chaos
from tests.fakes.discord_gateway import FakeGateway
from tests.fakes.discord_oracle import can_read, visible_messages
from tests.fakes.discord_shapes import (
    MANAGE_THREADS,
    MEMBER_OVERWRITE,
    READ_MESSAGE_HISTORY,
    ROLE_OVERWRITE,
    VIEW_CHANNEL,
    Role,
    ThreadInfo,
    new_id,
    overwrite,
)
from tests.integration.discord.conftest import GUILD_ID, discord_world


SEED = int(os.environ.get("ASKWITH_ORACLE_SEED", "14"))
BUCKETS = 16  # every oracle message carries one of these words, so clear searches (100 hits at most) see them all
HITS_PER_SEARCH = 90
TOKEN = re.compile(r"\bu\d+\b")
BUCKET = re.compile(r"\bbk(\d+)\b")


@dataclass
class Oracle:
    api: FakeDiscordApi
    gateway: FakeGateway
    runtime: DiscordRuntime
    db: Database
    fuzzy: FuzzyMemory
    rng: random.Random
    channels: list[str]
    staff: Role
    mods: Role
    threads: list[ThreadInfo] = field(default_factory=list)
    serial: int = 0
    joined: int = 0

    # ------------------------------------------------------------------ the world
    def active(self) -> list[str]:
        world = self.api.world
        return [m for m, member in world.members.items() if not member.deactivated and m != world.bot_id]

    def text(self) -> str:
        self.serial += 1
        words = self.rng.sample(["plan", "budget", "offer", "venue", "deadline", "launch", "salary", "train"], 2)
        return f"oracle bk{self.serial % BUCKETS} u{self.serial} {' '.join(words)}"

    def said(self) -> list[ChatMessage]:
        return [m for c in self.channels for m in self.api.world.messages[c] if m.text.startswith("oracle")]

    def readable(self, member_id: str) -> list[str]:
        return [c for c in self.channels if can_read(self.api, member_id, c)]

    def member(self, member_id: str) -> Member:
        return self.api.world.members[member_id]

    # ------------------------------------------------------------------ steps
    def step(self) -> str:
        actions = {
            self.post: 30, self.reply: 12, self.private_thread: 4, self.private_reply: 10, self.edit: 10,
            self.delete: 6, self.bulk_delete: 2, self.join: 3, self.leave: 2, self.toggle_staff: 5,
            self.toggle_mods: 3, self.toggle_overwrite: 4, self.thread_members: 5, self.archive: 3,
        }  # fmt: skip
        action = self.rng.choices(list(actions), weights=list(actions.values()))[0]
        return action() or action.__name__

    def post(self) -> str | None:
        author = self.rng.choice(self.active())
        if not (where := self.readable(author)):
            return "post: nowhere to post"
        self.gateway.message(self.rng.choice(where), self.member(author), self.text())
        return None

    def reply(self) -> str | None:
        author = self.rng.choice(self.active())
        starters = [m for m in self.said() if m.thread_id is None and can_read(self.api, author, m.channel_id)]
        if not starters:
            return "reply: no thread to reply in"
        parent = self.rng.choice(starters)
        self.gateway.message(parent.channel_id, self.member(author), self.text(), thread_id=parent.id)
        return None

    def private_thread(self) -> str | None:
        owner = self.rng.choice(self.active())
        channel = self.rng.choice(self.readable(owner) or self.channels)
        others = [m for m in self.active() if m != owner and can_read(self.api, m, channel)]
        members = [owner, *self.rng.sample(others, min(len(others), self.rng.randint(0, 2)))]
        thread = self.api.open_private_thread(channel, f"private {len(self.threads)}", members)
        self.threads.append(thread)
        self.gateway.thread_created(thread)
        return None

    def private_reply(self) -> str | None:
        live = [t for t in self.threads if t.member_ids & set(self.active())]
        if not live:
            return "private reply: no thread with a member"
        thread = self.rng.choice(live)
        author = self.rng.choice(sorted(thread.member_ids & set(self.active())))
        self.gateway.message(thread.parent_id, self.member(author), self.text(), thread_id=thread.id)
        return None

    def edit(self) -> str | None:
        mine = [m for m in self.said() if m.sender_id in self.active()]
        if not mine:
            return "edit: nothing to edit"
        self.gateway.edit(self.rng.choice(mine), self.text())
        return None

    def delete(self) -> str | None:
        if not (said := self.said()):
            return "delete: nothing to delete"
        self.gateway.delete(self.rng.choice(said))
        return None

    def bulk_delete(self) -> str | None:
        groups: dict[tuple[str, str | None], list[ChatMessage]] = {}
        for message in self.said():
            groups.setdefault((message.channel_id, message.thread_id), []).append(message)
        if not (big := [g for g in groups.values() if len(g) >= 2]):
            return "bulk delete: nothing to purge"
        group = self.rng.choice(big)
        self.gateway.bulk_delete(self.rng.sample(group, min(len(group), 3)))
        return None

    def join(self) -> str | None:
        self.joined += 1
        self.gateway.member_joins(Member(new_id(), f"newcomer{self.joined}", f"Newcomer {self.joined}"))
        return None

    def leave(self) -> str | None:
        candidates = [m for m in self.active() if m != self.api.extras.owner_id]
        if len(candidates) <= 3:
            return "leave: too few left"
        self.gateway.member_leaves(self.member(self.rng.choice(candidates)))
        return None

    def toggle_staff(self) -> str | None:
        member = self.rng.choice(self.active())
        roles = list(self.api.extras.member_roles.get(member, []))
        roles = [r for r in roles if r != self.staff.id] if self.staff.id in roles else [*roles, self.staff.id]
        self.gateway.set_roles(self.member(member), roles)
        return None

    def toggle_mods(self) -> str | None:
        if self.rng.random() < 0.5:  # the role's own permissions change: every holder at once
            self.mods.permissions ^= MANAGE_THREADS
            self.gateway.role_changed(self.mods)
            return "role permissions"
        member = self.rng.choice(self.active())
        roles = list(self.api.extras.member_roles.get(member, []))
        roles = [r for r in roles if r != self.mods.id] if self.mods.id in roles else [*roles, self.mods.id]
        self.gateway.set_roles(self.member(member), roles)
        return None

    def toggle_overwrite(self) -> str | None:
        channel = self.rng.choice(self.channels)
        member = self.rng.choice(self.active())
        current = self.api.extras.overwrites_for(self.api.world.channels[channel])
        others = [o for o in current if not (o["type"] == MEMBER_OVERWRITE and o["id"] == member)]
        mine = [o for o in current if o["type"] == MEMBER_OVERWRITE and o["id"] == member]
        if not mine:
            bits = VIEW_CHANNEL | READ_MESSAGE_HISTORY
            mine = [overwrite(member, MEMBER_OVERWRITE, **{self.rng.choice(["allow", "deny"]): bits})]
        else:
            mine = []
        self.gateway.set_overwrites(channel, others + mine)
        return None

    def thread_members(self) -> str | None:
        if not self.threads:
            return "thread members: no private thread"
        thread = self.rng.choice(self.threads)
        if thread.archived:  # Discord refuses member changes to an archived thread: someone unarchives it first
            self.gateway.archive(thread, archived=False)
        outside = [m for m in self.active() if m not in thread.member_ids]
        if thread.member_ids and (not outside or self.rng.random() < 0.4):
            self.gateway.thread_members(thread, removed=[self.rng.choice(sorted(thread.member_ids))])
        elif outside:
            self.gateway.thread_members(thread, added=[self.rng.choice(outside)])
        return None

    def archive(self) -> str | None:
        threads = list(self.api.public_threads().values())
        if not threads:
            return "archive: no thread"
        thread = self.rng.choice(threads)
        self.gateway.archive(thread, archived=not thread.archived)
        return None

    # ------------------------------------------------------------------ the check
    async def quiet(self) -> None:
        """Every event handler finished and every change it asked for applied (no fixed sleeps)."""
        while True:
            handlers = [t for t in asyncio.all_tasks() if t.get_name().startswith("discord.py: ") and not t.done()]
            if handlers:
                await asyncio.gather(*handlers, return_exceptions=True)
                continue
            await self.runtime.services.live.settled()
            if not [t for t in asyncio.all_tasks() if t.get_name().startswith("discord.py: ") and not t.done()]:
                return

    async def opt_in_newcomers(self) -> None:
        store = MemberSettingsStore(self.db)
        known = self.runtime.services.ingest._mirror
        opted_in = await self._opted_in()
        for member_id in self.active():
            if known is not None and member_id not in known.member_ids:
                await self.runtime.services.ingest.mirror()
                known = self.runtime.services.ingest._mirror
            if member_id not in opted_in:  # one write per newcomer, not one per member and step
                await store.set_opted_in(WorkspaceKey("discord", GUILD_ID), member_id, True)

    async def _opted_in(self) -> set[str]:
        async with self.db.session() as session:
            found = await session.execute(
                select(models.Member.platform_id)
                .join(models.Workspace, models.Workspace.id == models.Member.workspace_id)
                .where(
                    models.Workspace.platform == "discord",
                    models.Workspace.external_id == GUILD_ID,
                    models.Member.opted_in.is_(True),
                )
            )
            return set(found.scalars())

    async def divergences(self) -> list[str]:
        workspace_id = self.runtime.services.ingest.workspace_id or 0
        found = []
        groups = self._bucket_groups()
        for member_id in [*self.active(), *self._departed()]:
            expected = {(m.id, m.text) for m in visible_messages(self.api, member_id, channels=self.channels)}
            expected = {e for e in expected if e[1].startswith("oracle")}
            async with self.db.session() as session:
                viewer = await resolve_viewer(session, workspace_id, member_id)
            clear = await self._clear(viewer, groups)
            fuzzy, summary_tokens = await self._fuzzy(viewer)
            name = self.member(member_id).name
            if clear != expected:
                found.append(
                    f"clear {name}: missing {sorted(expected - clear)[:3]}, extra {sorted(clear - expected)[:3]}"
                )
            if fuzzy != expected:
                found.append(
                    f"fuzzy {name}: missing {sorted(expected - fuzzy)[:3]}, extra {sorted(fuzzy - expected)[:3]}"
                )
            if stray := summary_tokens - {t for _, text in expected for t in TOKEN.findall(text)}:
                found.append(f"fuzzy summaries {name}: words {sorted(stray)[:3]} it cannot see")
        return found

    def _departed(self) -> list[str]:
        return [m for m, member in self.api.world.members.items() if member.deactivated]

    def _bucket_groups(self) -> list[tuple[str, ...]]:
        """Bucket words OR-ed into as few searches as keep each under clear memory's 100 hits."""
        sizes = Counter(int(BUCKET.findall(m.text)[0]) for m in self.said())
        groups: list[tuple[str, ...]] = []
        current: list[str] = []
        size = 0
        for bucket in range(BUCKETS):
            if current and size + sizes[bucket] > HITS_PER_SEARCH:
                groups.append(tuple(current))
                current, size = [], 0
            current.append(f"bk{bucket}")
            size += sizes[bucket]
        return [*groups, tuple(current)]

    async def _clear(self, viewer: Viewer, groups: list[tuple[str, ...]]) -> set[tuple[str, str]]:
        memory = ClearMemory(self.db)
        hits = set()
        for keywords in groups:
            for hit in await memory.search(viewer, ClearQuery(keywords=keywords, limit=100)):
                hits.add((hit.message.id, hit.message.text))
        return hits

    async def _fuzzy(self, viewer: Viewer) -> tuple[set[tuple[str, str]], set[str]]:
        hits = await self.fuzzy.search(viewer, FuzzyQuery("oracle", top_k=5000, expand=True))
        messages = {(m.id, m.text) for hit in hits for m in hit.messages if m.text.startswith("oracle")}
        return messages, {t for hit in hits for t in TOKEN.findall(hit.summary)}


@pytest.fixture
async def oracle(sqlite_db: Database, settings: Settings, memory_dir: Path) -> AsyncIterator[Oracle]:
    world: World = discord_world()
    api = FakeDiscordApi(world, guild_id=GUILD_ID, owner_id=world.member_by_name("olga").id)
    rng = random.Random(SEED)
    channels = [c.id for c in world.channels.values()]
    staff, mods = Role(new_id(), "staff", 0), Role(new_id(), "mods", MANAGE_THREADS)
    api.extras.roles.update({staff.id: staff, mods.id: mods})
    launch = channels[2]
    api.extras.overwrites[launch] = [
        *api.extras.overwrites_for(world.channels[launch]),
        overwrite(staff.id, ROLE_OVERWRITE, allow=VIEW_CHANNEL | READ_MESSAGE_HISTORY),
    ]
    await api.start()
    settings = settings.replace(discord_bot_token=api.bot_token, chroma_prefix=f"oracle{SEED}")
    # Re-indexed after every step: kept in memory, so no write waits for the disk (the same Chroma code).
    index = VectorIndex.from_settings(settings.replace(data_dir=memory_dir), embedder=HashEmbedder())
    indexer = SessionIndexer(sqlite_db, settings, SessionSummarizer(sqlite_db, None), index)
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
    memory = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)
    runtime = await start_discord(
        settings,
        db=sqlite_db,
        ask_service=ask_factory(settings, sqlite_db, llm, memory),
        indexer=indexer,
        worker=False,
    )
    # `quiet()` waits for each step's re-index anyway: the debounce that merges a burst of changes would only add
    # its delay to every step (as the Slack oracle does); a re-index overlapping later events is still waited for.
    runtime.services.ingest.live.reindex_delay_s = 0.0
    gateway = FakeGateway(runtime.client, api)
    oracle = Oracle(api, gateway, runtime, sqlite_db, FuzzyMemory(sqlite_db, index), rng, channels, staff, mods)
    try:
        yield oracle
    finally:
        await runtime.close()
        await api.stop()


@pytest.mark.timeout(1800)  # 1,000 steps, each checked for every member: minutes on a busy machine
@pytest.mark.parametrize("steps", [100, pytest.param(1_000, marks=pytest.mark.slow)])
async def test_memory_equals_what_each_member_sees_after_every_step(oracle: Oracle, steps: int) -> None:
    await oracle.opt_in_newcomers()
    oracle.gateway.connect()
    await oracle.runtime.services.ingest.run()
    log: list[str] = []
    late = random.Random(SEED + 1)
    delivered_late = 0
    for number in range(1, steps + 1):
        hold = late.random() < 0.5  # this step's message events are held back
        if not hold:
            delivered_late += oracle.gateway.release(late)
            oracle.gateway.held = None
        elif oracle.gateway.held is None:
            oracle.gateway.held = []
        log.append(oracle.step())
        if hold and (number == steps or late.random() < 0.4):
            delivered_late += oracle.gateway.release(late)
        await oracle.quiet()
        await oracle.opt_in_newcomers()
        if oracle.gateway.held:
            continue  # memory may lag what Discord shows until the held events arrive
        divergences = await oracle.divergences()
        assert not divergences, f"step {number} ({log[-1]}), after {log[-6:-1]}: {divergences}"
    assert delivered_late > steps // 10, "message events were held back, shuffled and repeated"
    assert len(oracle.said()) > steps // 5, "the run exercised memory"
    if steps >= 500:
        assert {"edit", "delete", "join", "leave", "private_thread", "thread_members"} <= set(log), "every kind ran"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("steps", [40, pytest.param(1_000, marks=pytest.mark.slow)])
async def test_memory_follows_events_dropped_duplicated_and_reordered(oracle: Oracle, steps: int) -> None:
    """The same, with visibility events delivered as an unreliable network would: some twice (applied as once, no
    repair), some late, after the next one, and some never; a reconciliation (the full mirror) repairs those."""
    chaos = Chaos(random.Random(SEED + 1))
    oracle.gateway = FakeGateway(chaos.client(oracle.runtime.client), oracle.api)
    await oracle.opt_in_newcomers()
    oracle.gateway.connect()
    await oracle.runtime.services.ingest.run()
    log: list[str] = []
    reconciled = 0
    for number in range(1, steps + 1):
        log.append(oracle.step())
        await oracle.quiet()
        if chaos.unsynced:
            chaos.flush()
            await oracle.quiet()
            await oracle.runtime.services.ingest.mirror()
            chaos.unsynced, reconciled = False, reconciled + 1
        await oracle.opt_in_newcomers()
        divergences = await oracle.divergences()
        assert not divergences, f"step {number} ({log[-1]}, {chaos.counts}), after {log[-6:-1]}: {divergences}"
    if steps >= 500:
        assert min(chaos.counts.values()) > 0 and reconciled < steps // 4, (chaos.counts, reconciled)
