"""Channels are excluded by platform id or by name, resolved when the exclusion is written; a reference to no
channel is an error naming it, never an exclusion that silently excludes nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from adapters.local import LocalWorkspace
from bot.errors import UnknownChannelError
from bot.platform.port import Member
from bot.store import models
from bot.store.channel_refs import resolve_channels
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.world import MemberPolicy, World
from bot.store.world_mirror import WORLD_PLATFORM, mirror_world
from memory_ingest.worker import IngestWorker


async def excluded_of(db: Database, handle: str) -> set[str]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.Channel.platform_id)
            .join(models.MemberExclusion, models.MemberExclusion.channel_id == models.Channel.id)
            .join(models.Member, models.Member.id == models.MemberExclusion.member_id)
            .where(models.Member.platform_id == handle)
        )
        return set(rows.scalars())


def with_policy(world: World, handle: str, excluded: list[str]) -> World:
    world.policies[handle] = MemberPolicy(excluded_channels=excluded)
    return world


async def test_names_ids_and_hashes_all_resolve(db: Database, sample_world: World) -> None:
    await mirror_world(db, with_policy(sample_world, "alice", ["general", "#launch-team", "D-alice-bob"]))
    assert await excluded_of(db, "alice") == {"C-general", "C-launch", "D-alice-bob"}


async def test_an_unknown_channel_is_an_error_naming_it(db: Database, sample_world: World) -> None:
    with pytest.raises(UnknownChannelError, match="'#random'"):
        await mirror_world(db, with_policy(sample_world, "alice", ["general", "#random"]))
    workspace_id = await mirror_world(db, with_policy(sample_world, "alice", []))
    async with db.session() as session:
        for blank in ("", "  ", "#"):
            with pytest.raises(UnknownChannelError):
                await resolve_channels(session, workspace_id, [blank])
        assert await resolve_channels(session, workspace_id, []) == []


async def test_ingestion_resolves_names_too(sqlite_db: Database, sample_world: World) -> None:
    await IngestWorker(LocalWorkspace(with_policy(sample_world, "bob", ["launch-team"])), sqlite_db).run()
    assert await excluded_of(sqlite_db, "bob") == {"C-launch"}
    # A member's initial policy is written when they first appear.
    sample_world.add_member(Member("zoe", "zoe", "Zoe"), MemberPolicy(excluded_channels=["no-such-channel"]))
    with pytest.raises(UnknownChannelError, match="'no-such-channel'"):
        await IngestWorker(LocalWorkspace(sample_world), sqlite_db).run()


async def test_member_settings_take_a_name(db: Database, sample_world: World) -> None:
    await mirror_world(db, sample_world)
    store = MemberSettingsStore(db)
    workspace = WorkspaceKey(WORLD_PLATFORM, sample_world.id)
    settings = await store.set_excluded(workspace, "dave", "#launch-team", True)
    assert settings.excluded_channels == ("C-launch",)
    settings = await store.set_excluded(workspace, "dave", "launch-team", False)
    assert settings.excluded_channels == ()
    with pytest.raises(UnknownChannelError, match="'nowhere'"):
        await store.set_excluded(workspace, "dave", "nowhere", True)
