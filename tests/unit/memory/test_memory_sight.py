"""A turn's searches share the full-text statements they have in common, and only within that turn: a channel the
member excludes before the next turn is out of that turn's searches, shared or not."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from bot.agents.ablations import Ablations
from bot.agents.memory_tools import ClearParams, FuzzyParams, MemoryTools, QueryRecord
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.history import WholeHistory
from bot.memory.sight import Sight
from bot.memory.types import ClearQuery, FuzzyQuery, Viewer
from bot.memory.visibility import resolve_viewer
from bot.platform.port import Channel, ChannelKind, Member
from bot.store import models
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from bot.store.world_mirror import mirror_world


T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def small_world() -> World:
    world = World(id="sight", name="Sight")
    for handle in ("ann", "ben"):
        world.add_member(Member(f"U-{handle}", handle, handle.title()), MemberPolicy())
    world.add_channel(Channel("C-general", "general", ChannelKind.PUBLIC, ("U-ann", "U-ben")))
    world.add_channel(Channel("C-secret", "secret", ChannelKind.PRIVATE, ("U-ann", "U-ben")))
    world.add_message("C-general", "U-ann", "The bluebird launch is public now", ts=T0)
    world.add_message("C-secret", "U-ben", "Bluebird is the acquisition codename", ts=T0)
    return world


class CountingClear(ClearMemory):
    """Clear memory counting the statements it runs (a shared ranking runs once)."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.statements = 0

    async def _execute(self, *args: object, **kwargs: object):  # noqa: ANN202 - the rows of the statement
        self.statements += 1
        return await super()._execute(*args, **kwargs)  # type: ignore[arg-type]


class RankingFuzzy:
    """A fuzzy search that, as `FuzzyMemory` does, ranks the question's words through clear memory's ranking."""

    def __init__(self, clear: ClearMemory) -> None:
        self.clear = clear

    async def search(self, viewer: Viewer, query: FuzzyQuery, *, visible: Sight | None = None) -> list:
        await self.clear.ranked(viewer, ClearQuery(("bluebird",), limit=5), visible=visible)
        return []


@pytest.fixture
async def ann(db: Database) -> Viewer:
    workspace_id = await mirror_world(db, small_world())
    async with db.session() as session:
        return await resolve_viewer(session, workspace_id, "ann")


async def exclude(db: Database, viewer: Viewer, channel: str) -> None:
    async with db.session() as session, session.begin():
        channel_id = (
            await session.execute(select(models.Channel.id).where(models.Channel.platform_id == channel))
        ).scalar_one()
        session.add(models.MemberExclusion(member_id=viewer.member_id, channel_id=channel_id))


def channels(records: list[QueryRecord]) -> set[str]:
    """The channels of the lines the clear searches returned."""
    return {line.channel.lstrip("#") for record in records if record.kind == "clear" for line in record.hits}


async def test_searches_of_one_sight_run_a_statement_they_share_once(db: Database, ann: Viewer) -> None:
    clear = CountingClear(db)
    sight = Sight(await WholeHistory(db).channels(ann))
    query = ClearQuery(("bluebird",), limit=5)
    together = await asyncio.gather(*(clear.ranked(ann, query, visible=sight) for _ in range(3)))
    assert clear.statements == 1 and together[0] == together[1] == together[2] and len(together[0]) == 2
    await clear.ranked(ann, query, visible=Sight(sight))  # another reading (the next turn): searched again
    await clear.ranked(ann, query, visible=dict(sight))  # a plain mapping shares nothing
    assert clear.statements == 3


async def test_a_channel_excluded_before_the_next_turn_is_out_of_its_searches(db: Database, ann: Viewer) -> None:
    clear = CountingClear(db)
    memory = MemoryAccess(clear=clear, fuzzy=RankingFuzzy(clear), history=WholeHistory(db))
    tools = MemoryTools(ann, memory, Ablations())
    # Two different clear queries (not the ask's cache) that run one ranking with the fuzzy search's.
    turn = [ClearParams(("bluebird",), limit=5), ClearParams(("Bluebird",), limit=5)], [FuzzyParams("bluebird?")]

    first = await tools.run(*turn)
    assert channels(first) == {"general", "secret"}
    counted = clear.statements

    await exclude(db, ann, "C-secret")
    tools.cache.clear()  # the ask's own cache is `forget`'s to drop; this is about the turn's shared statements
    second = await tools.run(*turn)
    assert clear.statements > counted  # the new turn searched again, on its new reading of ann's channels
    assert channels(second) == {"general"}
