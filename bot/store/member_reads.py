"""What one member reads, changed as a whole: the store half of a visibility event that touched some members.

    changed = await set_member_channels(db, session, member_db_id, wanted={3, 7}, scope={3, 5, 7})
    await unread_token_channels(db, workspace_id, "U1", other_readers={"UBOT"})   # U1's token is gone

Only channels in `scope` (those the event's platform decides, e.g. a Discord server's channels) are touched: a DM
the member reads through their own token stays theirs.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import bulk, models, truth
from bot.store.db import Database


async def set_member_channels(
    db: Database, session: AsyncSession, member_db_id: int, *, wanted: set[int], scope: set[int]
) -> int:
    """Make the member's memberships within `scope` exactly `wanted`; returns how many rows changed."""
    current: set[int] = set()
    for batch in await bulk.chunks(session, sorted(scope), per_item=1):
        rows = await session.execute(
            select(models.Membership.channel_id).where(
                models.Membership.member_id == member_db_id, models.Membership.channel_id.in_(batch)
            )
        )
        current.update(rows.scalars())
    gone, new = sorted(current - wanted), sorted((wanted & scope) - current)
    for batch in await bulk.chunks(session, gone, per_item=1):
        await session.execute(
            delete(models.Membership).where(
                models.Membership.member_id == member_db_id, models.Membership.channel_id.in_(batch)
            )
        )
    rows = [{"channel_id": c, "member_id": member_db_id} for c in new]
    for chunk in await bulk.row_chunks(session, models.Membership, rows):
        await session.execute(db.insert(models.Membership).values(chunk).on_conflict_do_nothing())
    return len(gone) + len(new)


async def active_member_ids(session: AsyncSession, workspace_id: int, platform_ids: list[str]) -> dict[str, int]:
    """Database ids of those members who are stored and not deactivated."""
    found: dict[str, int] = {}
    for batch in await bulk.chunks(session, platform_ids, per_item=1):
        rows = await session.execute(
            select(models.Member.platform_id, models.Member.id).where(
                models.Member.workspace_id == workspace_id,
                models.Member.platform_id.in_(batch),
                ~models.Member.deactivated,
            )
        )
        found.update({platform_id: id_ for platform_id, id_ in rows.all()})
    return found


async def unread_token_channels(db: Database, workspace_id: int, member_id: str, *, other_readers: set[str]) -> None:
    """Leave the channels only `member_id`'s token could read (`truth.token_only_channels`) with no reader: found
    first, then forgotten in a transaction of its own."""
    async with db.session() as session:
        channels = await truth.token_only_channels(session, workspace_id, member_id, other_readers=other_readers)
    async with db.session() as session, session.begin():
        await truth.forget_readers(session, channels)
