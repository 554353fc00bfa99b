"""Ingestion status for admins: per channel (messages stored, newest message, when its cursor last moved) and per
member (opted in, share policy, channels in memory, exclusions)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from bot.memory.live import memory_source
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database, as_utc


@dataclass
class ChannelStatus:
    workspace: str
    name: str
    kind: str
    members: int
    messages: int
    newest_message: datetime | None
    cursor_moved: datetime | None  # None = never read (no opted-in member reads it, or not ingested yet)


@dataclass
class MemberStatus:
    workspace: str
    name: str
    display_name: str
    opted_in: bool
    share_policy: str
    channels: int
    excluded: int


async def channel_status(db: Database, *, workspace_id: int | None = None) -> list[ChannelStatus]:
    members = select(models.Membership.channel_id, func.count().label("n")).group_by(models.Membership.channel_id)
    messages = select(
        models.Message.channel_id, func.count().label("n"), func.max(models.Message.ts).label("newest")
    ).group_by(models.Message.channel_id)
    cursors = select(models.IngestCursor.channel_id, func.max(models.IngestCursor.updated_at).label("moved")).group_by(
        models.IngestCursor.channel_id
    )
    m, msg, cur = members.subquery(), messages.subquery(), cursors.subquery()
    stmt = (
        select(
            models.Workspace.name, models.Channel.name, models.Channel.kind, m.c.n, msg.c.n, msg.c.newest, cur.c.moved
        )
        .join(models.Channel, models.Channel.workspace_id == models.Workspace.id)
        .outerjoin(m, m.c.channel_id == models.Channel.id)
        .outerjoin(msg, msg.c.channel_id == models.Channel.id)
        .outerjoin(cur, cur.c.channel_id == models.Channel.id)
        .order_by(models.Workspace.name, models.Channel.name)
    )
    if workspace_id is not None:
        stmt = stmt.where(models.Workspace.id == workspace_id)
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    return [
        ChannelStatus(ws, name, kind, n_members or 0, n_messages or 0, _aware(newest), _aware(moved))
        for ws, name, kind, n_members, n_messages, newest, moved in rows
    ]


@dataclass
class ObjectProblem:
    workspace: str
    kind: str  # channel | thread | member_token
    object_id: str
    status: str  # backoff | retired | disabled | paused
    failures: int
    last_error: str
    retry_at: datetime | None


async def object_problems(db: Database, *, workspace_id: int | None = None) -> list[ObjectProblem]:
    """Channels, threads and member tokens ingestion does not read normally, per workspace."""
    stmt = (
        select(models.Workspace.name, models.IngestObject)
        .join(models.IngestObject, models.IngestObject.workspace_id == models.Workspace.id)
        .where(models.IngestObject.status != "ok")
        .order_by(models.Workspace.name, models.IngestObject.kind, models.IngestObject.object_id)
    )
    if workspace_id is not None:
        stmt = stmt.where(models.Workspace.id == workspace_id)
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    return [
        ObjectProblem(ws, o.kind, o.object_id, o.status, o.failures, o.last_error, _aware(o.retry_at))
        for ws, o in rows
    ]


async def member_status(db: Database, *, workspace_id: int | None = None) -> list[MemberStatus]:
    channels = select(models.Membership.member_id, func.count().label("n")).group_by(models.Membership.member_id)
    excluded = select(models.MemberExclusion.member_id, func.count().label("n")).group_by(
        models.MemberExclusion.member_id
    )
    c, e = channels.subquery(), excluded.subquery()
    stmt = (
        select(models.Workspace.name, models.Member, c.c.n, e.c.n)
        .join(models.Member, models.Member.workspace_id == models.Workspace.id)
        .outerjoin(c, c.c.member_id == models.Member.id)
        .outerjoin(e, e.c.member_id == models.Member.id)
        .where(models.Member.is_bot.is_(False))
        .order_by(models.Workspace.name, models.Member.name)
    )
    if workspace_id is not None:
        stmt = stmt.where(models.Workspace.id == workspace_id)
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    return [
        MemberStatus(ws, m.name, m.display_name, m.opted_in, m.share_policy, n_channels or 0, n_excluded or 0)
        for ws, m, n_channels, n_excluded in rows
    ]


def _aware(ts: datetime | None) -> datetime | None:
    return None if ts is None else as_utc(ts)


async def memory_sources(
    db: Database, settings: Settings, *, workspace_id: int | None = None
) -> list[tuple[str, str]]:
    """(workspace name, memory source) of each workspace shown: `mirror` (history copied here) or `live` (searched
    on the platform as each member, nothing kept; see `bot.memory.live`)."""
    stmt = select(models.Workspace.name, models.Workspace.platform)
    if workspace_id is not None:
        stmt = stmt.where(models.Workspace.id == workspace_id)
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    return [(name, memory_source(settings, platform)) for name, platform in rows]
