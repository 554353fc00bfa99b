"""Property: over random workspaces, members, exclusions and typed queries, no retrieval path (clear, hybrid, fuzzy)
returns a hit, a context neighbour or a session message outside the viewer's visible channels, even when the
exclusions change after the vectors were written (a stale vector must not show what is now hidden).

Each example is a new workspace in the same database and vector index, so earlier workspaces are there to leak
from. Hypothesis drives a synchronous function; each example runs on the test's event loop (see
test_clear_memory_scoping).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import select

from bot.memory.clear import ClearMemory
from bot.memory.embeddings import HashEmbedder
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.hybrid import HybridMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.query import read_query, search_typed
from bot.memory.summarizer import SessionSummarizer
from bot.memory.types import ClearQuery, FuzzyQuery, MessageView
from bot.memory.vector_index import VectorIndex
from bot.memory.visibility import resolve_viewer
from bot.settings import Settings
from bot.store import models
from bot.store.channel_refs import resolve_channels
from bot.store.chat_store import ChatStore
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world
from tests.unit.memory.test_clear_memory_scoping import HANDLES, VOCABULARY, queries, worlds


TYPED = st.lists(
    st.sampled_from([*VOCABULARY, *HANDLES, "yesterday", "on 1 May", "'s", '"', "🎉", "NEAR(", "-", "*"]),
    max_size=6,
).map(" ".join)


@dataclass(frozen=True)
class Case:
    world: World
    exclusions_after: dict[str, list[str]]  # new exclusions written after indexing: handle -> channel ids
    typed: list[tuple[str, str]]  # (viewer handle, typed text)
    structured: list[tuple[str, ClearQuery]]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    world = draw(worlds())
    handles = sorted(world.members)
    channels = sorted(world.channels)
    after = {h: draw(st.lists(st.sampled_from(channels), max_size=2, unique=True)) for h in handles}
    viewer = st.sampled_from(handles)
    typed = [(draw(viewer), draw(TYPED)) for _ in range(draw(st.integers(1, 3)))]
    structured = [(draw(viewer), draw(queries(world))) for _ in range(draw(st.integers(0, 2)))]
    return Case(world, after, typed, structured)


def allowed(world: World, exclusions: dict[str, list[str]], handle: str) -> set[str]:
    return {c.id for c in world.channels.values() if handle in c.member_ids and c.id not in exclusions[handle]}


def check(seen: list[MessageView], channels: set[str], who: str) -> None:
    for message in seen:
        assert message.channel_id in channels, f"{who} saw {message} from outside {sorted(channels)}"


async def test_no_retrieval_path_leaves_the_viewers_scope(db: Database, settings: Settings) -> None:
    loop = asyncio.get_running_loop()
    index = VectorIndex.from_settings(settings.replace(window_messages=2), embedder=HashEmbedder())
    indexer = SessionIndexer(db, settings.replace(window_messages=2), SessionSummarizer(db, None), index)
    clear, fuzzy = ClearMemory(db), FuzzyMemory(db, index)
    hybrid = HybridMemory(clear, index.windows())

    def on_loop(coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    async def exclude(workspace_id: int, exclusions: dict[str, list[str]]) -> None:
        async with db.session() as session, session.begin():
            for handle, channel_ids in exclusions.items():
                member = (
                    await session.execute(
                        select(models.Member.id).where(
                            models.Member.workspace_id == workspace_id, models.Member.platform_id == handle
                        )
                    )
                ).scalar_one()
                excluded = await resolve_channels(session, workspace_id, channel_ids)
                await ChatStore(db).set_exclusions(session, member, excluded)

    async def run_case(case: Case) -> None:
        workspace_id = await mirror_world(db, case.world)
        await indexer.update(workspace_id)
        await exclude(workspace_id, case.exclusions_after)  # after the vectors were written
        searches = [(h, text, None) for h, text in case.typed] + [(h, "", q) for h, q in case.structured]
        for handle, text, query in searches:
            async with db.session() as session:
                viewer = await resolve_viewer(session, workspace_id, handle)
            channels = allowed(case.world, case.exclusions_after, handle)
            if query is None:
                read = read_query(text, participants=[handle])
                for memory in (clear, hybrid):
                    for hit in await search_typed(memory, viewer, read, context_window=2):
                        check([hit.message, *hit.context], channels, handle)
                query = ClearQuery(read.keywords or ("apple",), question=text, context_window=1)
                for session_hit in await fuzzy.search(viewer, FuzzyQuery(text or "apple", top_k=5, expand=True)):
                    assert session_hit.channel_id in channels
                    check([*session_hit.messages, *session_hit.matches], channels, handle)
            for hit in await hybrid.search(viewer, query):
                check([hit.message, *hit.context], channels, handle)
                assert len(hit.context) <= 2 * query.context_window + 1

    @hypothesis_settings(
        max_examples=25 if db.dialect == "sqlite" else 10,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(cases())
    def property_holds(case: Case) -> None:
        on_loop(run_case(case))

    await asyncio.to_thread(property_holds)
