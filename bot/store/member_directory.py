"""Members found by what people call them: a handle or platform id typed on the command line, the handles an
approval card names, the platform ids a live search returns; with the names they are shown by.

    names = await display_names(db, workspace_id, ["alice", "bob"])        # {"alice": "Alice Smith", "bob": "bob"}
    workspace_id, member = await workspace_member(db, WorkspaceKey("slack", "T1"), "@Alice")   # member: (id, handle)
    found = await roster(db, WorkspaceKey("slack", "T1"), {"U1", "U2"})    # [(platform id, handle, display name)]
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import models
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database


async def display_names(db: Database, workspace_id: int, handles: Iterable[str]) -> dict[str, str]:
    """Handle -> display name (the handle where there is none), for the handles stored in the workspace."""
    stmt = select(models.Member.name, models.Member.display_name).where(
        models.Member.workspace_id == workspace_id, models.Member.name.in_(set(handles))
    )
    async with db.session() as session:
        return {name: display or name for name, display in (await session.execute(stmt)).all()}


async def roster(db: Database, workspace: WorkspaceKey, platform_ids: Iterable[str]) -> list[tuple[str, str, str]]:
    """(platform id, handle, display name) of those members stored in the workspace."""
    async with db.session() as session:
        rows = await session.execute(
            select(models.Member.platform_id, models.Member.name, models.Member.display_name)
            .join(models.Workspace, models.Workspace.id == models.Member.workspace_id)
            .where(
                models.Workspace.platform == workspace.platform, models.Workspace.external_id == workspace.external_id
            )
            .where(models.Member.platform_id.in_(set(platform_ids)))
        )
        return [(platform_id, name, shown) for platform_id, name, shown in rows.all()]


async def find_member(session: AsyncSession, workspace_id: int, who: str) -> tuple[int, str] | None:
    """(database id, handle) of the member named by handle (with or without @) or platform id: an exact handle or id
    wins; otherwise a case-insensitive match counts only when it names one member (`--as Alice` is alice)."""
    wanted = who.strip().lstrip("@")
    rows = (
        await session.execute(
            select(models.Member.id, models.Member.name, models.Member.platform_id).where(
                models.Member.workspace_id == workspace_id,
                (models.Member.platform_id == wanted)
                | (models.Member.name == wanted)
                | (func.lower(models.Member.name) == wanted.lower()),
            )
        )
    ).all()
    exact = [r for r in rows if wanted in (r[1], r[2])]
    row = exact[0] if exact else (rows[0] if len(rows) == 1 else None)
    return None if row is None else (row[0], row[1])


async def workspace_member(
    db: Database, workspace: WorkspaceKey, who: str
) -> tuple[int | None, tuple[int, str] | None]:
    """The workspace's id (None: not stored) and, within it, the member `who` names (`find_member`), read together."""
    async with db.session() as session:
        workspace_id = await ChatStore(db).find_workspace(session, workspace)
        if workspace_id is None:
            return None, None
        return workspace_id, await find_member(session, workspace_id, who)
