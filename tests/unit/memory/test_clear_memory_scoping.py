"""Property: over random workspaces, policies and queries, clear memory never returns (as a hit or as context) a
message outside the viewer's channels or inside a channel their policy excludes; and it does find what they may see.

Every example is a new workspace in the same database, so earlier workspaces (same handles, same words) are there
to leak from too. Hypothesis drives a synchronous function; each example's coroutine runs on the test's own event
loop (which owns the database connections) while the test awaits the hypothesis run in a worker thread.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.memory.clear import ClearMemory
from bot.memory.history import WholeHistory
from bot.memory.keywords import phrase_of
from bot.memory.types import ClearHit, ClearQuery
from bot.memory.visibility import resolve_viewer
from bot.platform.port import Channel, ChannelKind, ChatMessage, Member
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from bot.store.world_mirror import mirror_world


VOCABULARY = ("apple", "river", "stone", "cloud", "lamp", "tiger", "paper", "green")
HANDLES = ("ann", "ben", "cat", "dan", "eve", "fay")
T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
world_ids = itertools.count()


@dataclass(frozen=True)
class Case:
    world: World
    queries: list[tuple[str, ClearQuery]]  # (viewer handle, query)


# ---------------------------------------------------------------------- strategies
texts = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5).map(" ".join)
moments = st.integers(min_value=0, max_value=12).map(lambda m: T0 + timedelta(minutes=m))


@st.composite
def channel_specs(draw: st.DrawFn, handles: list[str], index: int) -> Channel:
    kind = draw(st.sampled_from(list(ChannelKind) if len(handles) > 2 else [ChannelKind.PUBLIC, ChannelKind.DM]))
    if kind is ChannelKind.DM:
        members = draw(st.lists(st.sampled_from(handles), min_size=2, max_size=2, unique=True))
    elif kind is ChannelKind.GROUP_DM:
        members = draw(st.lists(st.sampled_from(handles), min_size=3, max_size=len(handles), unique=True))
    else:
        members = draw(st.lists(st.sampled_from(handles), min_size=1, max_size=len(handles), unique=True))
    return Channel(f"C{index}", f"chan{index}", kind, tuple(sorted(members)))


@st.composite
def worlds(draw: st.DrawFn) -> World:
    handles = list(HANDLES[: draw(st.integers(min_value=2, max_value=len(HANDLES)))])
    world = World(id=f"w{next(world_ids)}", name="random")
    channels = [draw(channel_specs(handles, i)) for i in range(draw(st.integers(min_value=1, max_value=6)))]
    for handle in handles:
        excluded = draw(st.lists(st.sampled_from([c.id for c in channels]), max_size=2, unique=True))
        world.add_member(Member(handle, handle, handle.title()), MemberPolicy(excluded_channels=excluded))
    for channel in channels:
        world.add_channel(channel)
    for _ in range(draw(st.integers(min_value=0, max_value=30))):
        channel = draw(st.sampled_from(channels))
        sender = draw(st.sampled_from(channel.member_ids))
        message = world.add_message(channel.id, sender, draw(texts), ts=draw(moments))
        # Fan-out: the same line, same time, also stored in other channels the sender is in.
        for other in draw(st.lists(st.sampled_from(channels), max_size=2, unique_by=lambda c: c.id)):
            if other.id != channel.id and sender in other.member_ids:
                world.add_message(other.id, sender, message.text, ts=message.ts)
    for messages in world.messages.values():
        messages.sort(key=lambda m: m.ts)
    return world


@st.composite
def queries(draw: st.DrawFn, world: World) -> ClearQuery:
    words = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=2).map(" ".join)
    since, until = draw(st.none() | moments), draw(st.none() | moments)
    return ClearQuery(
        keywords=tuple(draw(st.lists(words, min_size=1, max_size=3))),
        sender=draw(st.none() | st.sampled_from(sorted(world.members))),
        channel=draw(st.none() | st.sampled_from(sorted(world.channels)).map(lambda c: world.channels[c].name)),
        since=since,
        until=until,
        context_window=draw(st.integers(min_value=0, max_value=3)),
        limit=draw(st.integers(min_value=1, max_value=8)),
    )


@st.composite
def cases(draw: st.DrawFn) -> Case:
    world = draw(worlds())
    viewers = st.sampled_from(sorted(world.members))
    return Case(world, [(draw(viewers), draw(queries(world))) for _ in range(draw(st.integers(1, 4)))])


# ---------------------------------------------------------------------- the oracle
def allowed_channels(world: World, handle: str) -> set[str]:
    excluded = set(world.policies[handle].excluded_channels)
    return {c.id for c in world.channels.values() if handle in c.member_ids and c.id not in excluded}


def contains_phrase(text: str, keyword: str) -> bool:
    words, phrase = phrase_of(text), phrase_of(keyword)
    return any(words[i : i + len(phrase)] == phrase for i in range(len(words) - len(phrase) + 1))


def expected_matches(world: World, handle: str, query: ClearQuery) -> list[ChatMessage]:
    """What the viewer may see that the query asks for, by brute force over the world."""
    channel_ids = {c.id for c in world.channels.values() if query.channel in (None, c.name)}
    return [
        m
        for channel in allowed_channels(world, handle) & channel_ids
        for m in world.messages[channel]
        if any(contains_phrase(m.text, k) for k in query.keywords)
        and query.sender in (None, m.sender_id)
        and (query.since is None or m.ts >= query.since)
        and (query.until is None or m.ts <= query.until)
    ]


def check(world: World, handle: str, query: ClearQuery, hits: list[ClearHit]) -> None:
    allowed = allowed_channels(world, handle)
    for hit in hits:
        for seen in (hit.message, *hit.context):
            assert seen.channel_id in allowed, f"{handle} saw {seen} from outside {sorted(allowed)}"
        assert all(m.channel_id == hit.message.channel_id for m in hit.context)
        assert len(hit.context) <= 2 * query.context_window + 1
        assert hit.context == tuple(sorted(hit.context, key=lambda m: (m.ts, m.id)))
    expected = expected_matches(world, handle, query)
    lines = {(m.sender_id, m.text, m.ts) for m in expected}
    assert {(h.message.sender, h.message.text, h.message.ts) for h in hits} <= lines
    assert len(hits) == min(query.limit, len(lines))
    assert sum(h.duplicates + 1 for h in hits) <= len(expected)


# ---------------------------------------------------------------------- the property
async def test_no_read_ever_leaves_the_viewers_scope(db: Database) -> None:
    loop = asyncio.get_running_loop()
    # With and without the FTS scope tokens (SQLite), with and without the viewer's channels read beforehand: all
    # must give the same answer.
    memories = [ClearMemory(db, scoped_match_matches_per_channel=0), ClearMemory(db, scoped_match_max_channels=0)]

    def on_loop(coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    async def run_case(case: Case) -> None:
        workspace_id = await mirror_world(db, case.world)
        for handle, query in case.queries:
            async with db.session() as session:
                viewer = await resolve_viewer(session, workspace_id, handle)
            results = [await memory.search(viewer, query) for memory in memories]
            # An agent's turn reads the viewer's channels once and hands them to each search: the same answer.
            visible = await WholeHistory(db).channels(viewer)
            results += [await memory.search(viewer, query, visible=visible) for memory in memories]
            check(case.world, handle, query, results[0])
            assert all(result == results[0] for result in results[1:])

    @settings(
        max_examples=60 if db.dialect == "sqlite" else 20,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(cases())
    def property_holds(case: Case) -> None:
        on_loop(run_case(case))

    await asyncio.to_thread(property_holds)
