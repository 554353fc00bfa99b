"""Resolving recorded hit ids (message platform ids, "session:<key>") to what they were, and the channels a viewer
belongs to, so the redaction rule can decide what to show."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import aliased

from bot.asks.read_models.redaction import Hit
from bot.store import models
from bot.store.db import Database


SESSION_PREFIX = "session:"


async def resolve_hits(db: Database, workspace_id: int, hit_ids: Iterable[str]) -> dict[str, Hit]:
    """Every id that still exists, as a `Hit`; ids that do not are left out (the caller withholds them)."""
    wanted = set(hit_ids)
    sessions = {i.removeprefix(SESSION_PREFIX) for i in wanted if i.startswith(SESSION_PREFIX)}
    messages = wanted - {SESSION_PREFIX + key for key in sessions}
    found = await _messages(db, workspace_id, messages)
    found.update(await _sessions(db, workspace_id, sessions))
    return found


async def _messages(db: Database, workspace_id: int, ids: set[str]) -> dict[str, Hit]:
    if not ids:
        return {}
    sender = aliased(models.Member)
    stmt = (
        select(models.Message, models.Channel.name, sender.name)
        .join(models.Channel, models.Channel.id == models.Message.channel_id)
        .join(sender, sender.id == models.Message.sender_id)
        .where(models.Message.workspace_id == workspace_id, models.Message.platform_id.in_(ids))
    )
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    return {
        m.platform_id: Hit(m.platform_id, m.channel_id, channel_name, sender_name, m.ts, m.text)
        for m, channel_name, sender_name in rows
    }


async def _sessions(db: Database, workspace_id: int, keys: set[str]) -> dict[str, Hit]:
    if not keys:
        return {}
    stmt = (
        select(models.MemorySession, models.Channel.name, models.SessionSummary.text)
        .join(models.Channel, models.Channel.id == models.MemorySession.channel_id)
        .outerjoin(models.SessionSummary, models.SessionSummary.content_hash == models.MemorySession.content_hash)
        .where(models.MemorySession.workspace_id == workspace_id, models.MemorySession.key.in_(keys))
    )
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    return {
        SESSION_PREFIX + s.key: Hit(SESSION_PREFIX + s.key, s.channel_id, channel_name, "", s.first_ts, summary or "")
        for s, channel_name, summary in rows
    }


async def member_channels(db: Database, workspace_id: int, member: str) -> frozenset[int]:
    """Store ids of the channels a member belongs to (what they can read in the chat themselves)."""
    stmt = (
        select(models.Membership.channel_id)
        .join(models.Member, models.Member.id == models.Membership.member_id)
        .where(models.Member.workspace_id == workspace_id, models.Member.name == member)
    )
    async with db.session() as session:
        return frozenset((await session.execute(stmt)).scalars())


async def display_names(db: Database, workspace_id: int) -> dict[str, str]:
    stmt = select(models.Member.name, models.Member.display_name).where(models.Member.workspace_id == workspace_id)
    async with db.session() as session:
        return {name: display or name for name, display in (await session.execute(stmt)).all()}
