"""Write a whole `World` straight into the store, without the chat port or the ingestion pipeline.

    workspace_id = await mirror_world(db, world)

For tests and benchmarks that need a populated store quickly: the workspace, members (with their initial policies
and channel exclusions), channels, memberships and every message go through `ChatStore` in one transaction, so the
rows are exactly those ingestion would write. Idempotent like `ChatStore`: mirroring the same world twice adds
nothing. Ingestion proper (cursors, opt-in, bots' posts left out) lives in `memory_ingest`.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.channel_refs import resolve_channels
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database
from bot.store.world import World


WORLD_PLATFORM = "local"  # worlds are the local workspace's model: their key matches LocalWorkspace's


async def mirror_world(db: Database, world: World) -> int:
    """Store `world` (structure, policies and messages) and return its workspace id."""
    store = ChatStore(db)
    async with db.session() as session, session.begin():
        workspace_id = await store.ensure_workspace(session, WorkspaceKey(WORLD_PLATFORM, world.id), world.name)
        member_ids = await store.upsert_members(session, workspace_id, world.members.values(), world.policies)
        channel_ids = await store.upsert_channels(session, workspace_id, world.channels.values(), member_ids)
        await _set_exclusions(session, store, world, workspace_id, member_ids)
        for messages in world.messages.values():
            await store.add_messages(session, workspace_id, messages, channel_ids, member_ids)
    return workspace_id


async def _set_exclusions(
    session: AsyncSession, store: ChatStore, world: World, workspace_id: int, member_ids: dict[str, int]
) -> None:
    for member_id, policy in world.policies.items():
        # By platform id or by name; an unknown channel is an error, never an exclusion of nothing.
        excluded = await resolve_channels(session, workspace_id, policy.excluded_channels)
        await store.set_exclusions(session, member_ids[member_id], excluded)
