"""Many workspaces in one store: a member of one can never read another's memory (clear or fuzzy), whatever ids the
platforms reuse across workspaces (property-tested: the two workspaces share member and channel ids on purpose)."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.local import LocalWorkspace
from bot.memory.clear import MAX_LIMIT, ClearMemory
from bot.memory.embeddings import HashEmbedder
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.types import ClearQuery, FuzzyQuery
from bot.memory.vector_index import VectorIndex
from bot.memory.visibility import resolve_viewer
from bot.platform.port import Channel, ChannelKind, Member
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import World
from memory_ingest.worker import IngestWorker


MEMBERS = ("u1", "u2", "u3", "u4")
T0 = datetime(2026, 11, 2, 9, tzinfo=UTC)

channel_spec = st.tuples(st.sampled_from(list(ChannelKind)[:2]), st.sets(st.sampled_from(MEMBERS), min_size=1))
workspace_spec = st.tuples(
    st.lists(channel_spec, min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 2), st.sampled_from(MEMBERS)), min_size=1, max_size=12),
)


def build(world_id: str, spec: tuple) -> World:
    """A workspace whose member and channel ids are the same in every workspace; texts name their workspace."""
    channels, posts = spec
    world = World(id=world_id, name=world_id)
    for member in MEMBERS:
        world.add_member(Member(member, member, member.upper()))
    for i, (kind, members) in enumerate(channels):
        world.add_channel(Channel(f"c{i}", f"c{i}", kind, tuple(sorted(members))))
    for n, (channel, sender) in enumerate(posts):
        channel_id = f"c{channel % len(channels)}"
        if sender in world.channels[channel_id].member_ids:
            world.add_message(channel_id, sender, f"said in {world_id} number{n}", ts=T0 + timedelta(minutes=n))
    return world


async def check(a: World, b: World) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Settings(data_dir=Path(tmp), embedder="hash")
        db = await Database.open(config, url=f"sqlite+aiosqlite:///{tmp}/p.db")
        index = VectorIndex.from_settings(config, embedder=HashEmbedder())
        indexer = SessionIndexer(db, config, SessionSummarizer(db, None), index)
        try:
            for world in (a, b):
                await IngestWorker(LocalWorkspace(world), db, indexer=indexer).run()
            for world in (a, b):
                ws = await IngestWorker(LocalWorkspace(world), db).live.workspace_id(WorkspaceKey("local", world.id))
                assert ws is not None
                other = b.id if world is a else a.id
                for member in MEMBERS:
                    async with db.session() as session:
                        viewer = await resolve_viewer(session, ws, member)
                    clear = await ClearMemory(db).search(
                        viewer, ClearQuery(keywords=("said", a.id, b.id), context_window=3, limit=MAX_LIMIT)
                    )
                    seen = [h.message.text for h in clear] + [c.text for h in clear for c in h.context]
                    fuzzy = await FuzzyMemory(db, index).search(
                        viewer, FuzzyQuery(text=f"said in {other}", top_k=100, expand=True)
                    )
                    seen += [h.summary for h in fuzzy] + [m.text for h in fuzzy for m in h.messages]
                    assert not any(other in text for text in seen), (member, world.id, seen)
                    expected = {m.text for c in world.visible_channels(member) for m in world.messages[c.id]}
                    assert {h.message.text for h in clear} == expected
                    # Settings are the member's in this workspace only.
                    mine = await MemberSettingsStore(db).get(WorkspaceKey("local", world.id), member)
                    assert mine.excluded_channels == ()
        finally:
            await db.close()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workspace_spec, workspace_spec)
def test_a_member_of_one_workspace_never_reads_another(first: tuple, second: tuple) -> None:
    asyncio.run(check(build("wsa", first), build("wsb", second)))
