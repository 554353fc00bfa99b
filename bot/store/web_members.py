"""The members the web sign-in reads: one by workspace and name (what a signed link or a session claims), and a
workspace's people for the local member picker.

    member = await member_named(db, workspace_id=1, name="alice")   # None when not stored
    people = await people_of(db, workspace_id=1)                     # bots left out, by name
"""

from __future__ import annotations

from sqlalchemy import select

from bot.store import models
from bot.store.db import Database


async def member_named(db: Database, *, workspace_id: int, name: str) -> models.Member | None:
    """The stored member of that name (a bot included: the caller decides who may sign in)."""
    stmt = select(models.Member).where(models.Member.workspace_id == workspace_id, models.Member.name == name)
    async with db.session() as session:
        return (await session.execute(stmt)).scalar_one_or_none()


async def people_of(db: Database, *, workspace_id: int) -> list[models.Member]:
    """The workspace's members who are not bots, ordered by name."""
    stmt = (
        select(models.Member)
        .where(models.Member.workspace_id == workspace_id, models.Member.is_bot.is_(False))
        .order_by(models.Member.name)
    )
    async with db.session() as session:
        return list((await session.execute(stmt)).scalars())
