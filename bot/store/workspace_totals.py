"""What the database holds per workspace, for `askwith status`: each stored workspace with its message count and
the number of members' tokens kept for it.

    for totals in await workspace_totals(db):
        print(f"{totals.platform}:{totals.external_id}", totals.name, totals.messages, totals.tokens)
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from bot.store import models
from bot.store.db import Database


@dataclass(frozen=True)
class WorkspaceTotals:
    id: int  # database id
    platform: str
    external_id: str
    name: str
    messages: int
    tokens: int  # members' own tokens stored for the workspace


async def workspace_totals(db: Database) -> list[WorkspaceTotals]:
    """Every stored workspace with its counts, read in one session."""
    async with db.session() as session:
        workspaces = (await session.execute(select(models.Workspace))).scalars().all()
        totals = []
        for ws in workspaces:
            messages = select(func.count()).select_from(models.Message).where(models.Message.workspace_id == ws.id)
            tokens = (
                select(func.count())
                .select_from(models.UserToken)
                .where(
                    models.UserToken.platform == ws.platform,
                    models.UserToken.workspace_external_id == ws.external_id,
                )
            )
            counts = int(await session.scalar(messages)), int(await session.scalar(tokens))
            totals.append(WorkspaceTotals(ws.id, ws.platform, ws.external_id, ws.name, *counts))
        return totals
