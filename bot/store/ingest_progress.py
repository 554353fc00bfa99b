"""When ingestion last moved forward in each workspace: the newest history-cursor update of its channels.

    for workspace, moved in await last_cursor_moves(db):   # ("acme", datetime(...)), ...
        lag = now - as_utc(moved)

A workspace none of whose channels has a cursor yet is left out.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from bot.store import models
from bot.store.db import Database


async def last_cursor_moves(db: Database) -> list[tuple[str, datetime]]:
    """(workspace name, when a history cursor of one of its channels last moved), for each workspace that has one."""
    stmt = (
        select(models.Workspace.name, func.max(models.IngestCursor.updated_at))
        .join(models.Channel, models.Channel.workspace_id == models.Workspace.id)
        .join(models.IngestCursor, models.IngestCursor.channel_id == models.Channel.id)
        .group_by(models.Workspace.name)
    )
    async with db.session() as session:
        return [(name, moved) for name, moved in (await session.execute(stmt)).all()]
