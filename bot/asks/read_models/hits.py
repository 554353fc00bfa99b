"""Resolving recorded hit ids (message platform ids, "session:<key>") to what they were, and the channels a viewer
belongs to, so the redaction rule can decide what to show. Each reads in a session the caller holds, so a page reads
all it shows through one connection:

    async with db.session() as session:
        hits = await resolve_hits(session, workspace_id, ["m0000013", "session:ab12"])   # {id: Hit}
        channels = await memberships(session, workspace_id, "carol")                   # [(channel id, name)]
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from bot.asks.read_models.redaction import Hit
from bot.store import models


SESSION_PREFIX = "session:"


async def resolve_hits(session: AsyncSession, workspace_id: int, hit_ids: Iterable[str]) -> dict[str, Hit]:
    """Every id that still exists, as a `Hit`; ids that do not are left out (the caller withholds them)."""
    wanted = set(hit_ids)
    sessions = {i.removeprefix(SESSION_PREFIX) for i in wanted if i.startswith(SESSION_PREFIX)}
    messages = wanted - {SESSION_PREFIX + key for key in sessions}
    found = await _messages(session, workspace_id, messages)
    found.update(await _sessions(session, workspace_id, sessions))
    return found


async def _messages(session: AsyncSession, workspace_id: int, ids: set[str]) -> dict[str, Hit]:
    if not ids:
        return {}
    message, sender = models.Message, aliased(models.Member)
    stmt = (
        select(message.platform_id, message.channel_id, models.Channel.name, sender.name, message.ts, message.text)
        .join(models.Channel, models.Channel.id == message.channel_id)
        .join(sender, sender.id == message.sender_id)
        .where(message.workspace_id == workspace_id, message.platform_id.in_(ids))
    )
    return {row[0]: Hit(*row) for row in (await session.execute(stmt)).all()}


async def _sessions(session: AsyncSession, workspace_id: int, keys: set[str]) -> dict[str, Hit]:
    if not keys:
        return {}
    memory = models.MemorySession
    stmt = (
        select(memory.key, memory.channel_id, models.Channel.name, memory.first_ts, models.SessionSummary.text)
        .join(models.Channel, models.Channel.id == memory.channel_id)
        .outerjoin(models.SessionSummary, models.SessionSummary.content_hash == memory.content_hash)
        .where(memory.workspace_id == workspace_id, memory.key.in_(keys))
    )
    return {
        SESSION_PREFIX + key: Hit(SESSION_PREFIX + key, channel_id, channel_name, "", first_ts, summary or "")
        for key, channel_id, channel_name, first_ts, summary in (await session.execute(stmt)).all()
    }


async def memberships(session: AsyncSession, workspace_id: int, member: str) -> list[tuple[int, str | None]]:
    """(store id, name) of every channel a member belongs to: what they can read in the chat themselves (by id, for
    the redaction rule) and the audiences they are among (by "#name", for `ask_view.Viewer`). A membership whose
    channel row is gone still counts by id, with no name."""
    stmt = (
        select(models.Membership.channel_id, models.Channel.name)
        .join(models.Member, models.Member.id == models.Membership.member_id)
        .outerjoin(models.Channel, models.Channel.id == models.Membership.channel_id)
        .where(models.Member.workspace_id == workspace_id, models.Member.name == member)
    )
    return [(channel_id, name) for channel_id, name in (await session.execute(stmt)).all()]


async def display_names(session: AsyncSession, workspace_id: int) -> dict[str, str]:
    stmt = select(models.Member.name, models.Member.display_name).where(models.Member.workspace_id == workspace_id)
    return {name: display or name for name, display in (await session.execute(stmt)).all()}
