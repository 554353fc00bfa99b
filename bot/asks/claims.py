"""Claiming asks: the one worker that runs an ask holds its claim (`claimed_by`, renewed by heartbeats)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, Integer, and_, bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.asks import models
from bot.store.db import Database


class AskClaims:
    def __init__(self, db: Database, *, workspace_id: int, worker_id: str, stale_seconds: float) -> None:
        self.db = db
        self.workspace_id = workspace_id
        self.worker_id = worker_id
        self.stale_seconds = stale_seconds  # a claim not renewed for this long may be taken over

    def _claimable(self) -> object:
        stale = datetime.now(UTC) - timedelta(seconds=self.stale_seconds)
        ask = models.Ask
        return and_(
            ask.workspace_id == self.workspace_id,
            or_(
                ask.status == models.AskStatus.QUEUED.value,
                and_(
                    ask.status.in_([models.AskStatus.RUNNING.value, models.AskStatus.WAITING.value]),
                    ask.heartbeat_at < stale,
                ),
            ),
        )

    async def claim_next(self) -> int | None:
        """Claim the oldest queued ask, or a running one whose worker went silent; None if there is none.

        PostgreSQL: `FOR UPDATE SKIP LOCKED` lets several workers claim side by side without waiting on each other.
        The conditional UPDATE makes the claim safe on SQLite too (meant for a single worker there)."""
        claimable = self._claimable()
        async with self.db.session() as session, session.begin():
            stmt = select(models.Ask.id).where(claimable).order_by(models.Ask.id).limit(1)
            if self.db.dialect == "postgresql":
                stmt = stmt.with_for_update(skip_locked=True)
            ask_id = (await session.execute(stmt)).scalar_one_or_none()
            if ask_id is None:
                return None
            claimed = await self._take(session, ask_id, claimable)
        return ask_id if claimed else None

    async def claim(self, ask_id: int) -> bool:
        """Claim one given ask (the in-process path); False if another worker holds it."""
        async with self.db.session() as session, session.begin():
            return await self._take(session, ask_id, self._claimable())

    async def release(self, ask_id: int) -> None:
        """Give a claimed, unfinished ask back to the queue (this worker stops); its saved turns are kept."""
        ask = models.Ask
        unfinished = [models.AskStatus.RUNNING.value, models.AskStatus.WAITING.value]
        async with self.db.session() as session, session.begin():
            await session.execute(
                update(ask)
                .where(ask.id == ask_id, ask.claimed_by == self.worker_id, ask.status.in_(unfinished))
                .values(status=models.AskStatus.QUEUED.value, claimed_by=None, attempts=ask.attempts - 1)
            )

    async def _take(self, session: AsyncSession, ask_id: int, claimable: object) -> bool:
        result = await session.execute(
            update(models.Ask)
            .where(models.Ask.id == ask_id, claimable)
            .values(
                status=models.AskStatus.RUNNING.value,
                claimed_by=self.worker_id,
                heartbeat_at=datetime.now(UTC),
                attempts=models.Ask.attempts + 1,
            )
        )
        return result.rowcount == 1


def held_by_worker() -> ColumnElement[bool]:
    """Ask `ask_id` is held by `worker` (bind parameters), for statements built once."""
    ask = models.Ask.__table__
    return (ask.c.id == bindparam("ask_id", type_=Integer)) & (ask.c.claimed_by == bindparam("worker"))
