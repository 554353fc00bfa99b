"""Rate slots in the database: when each platform Web API method may next be called in a workspace, one row per
(workspace, method) shared by every process on the database, so `askwith serve` and any number of `askwith worker`
together keep to a posted rate instead of each keeping to it alone.

Taking a slot is a reservation made in one statement (an upsert, atomic on SQLite and PostgreSQL alike): the caller
gets the slot at `max(next_at, now)` and moves `next_at` on by the method's interval, then waits for its slot outside
any transaction. Callers of every process thus queue in the order they reserved. A wait the caller will not make
(`max_wait_s`) reserves nothing. Times are wall-clock seconds since the epoch, the one clock processes share.

    slots = RateSlots(db)
    slot_at, taken = await slots.take("T1", "conversations.history", now=time.time(), interval_s=60.0)
    await asyncio.sleep(max(0.0, slot_at - time.time()))      # then call Slack
    await slots.defer("T1", "conversations.history", until=time.time() + 30.0)   # Slack answered 429
"""

from __future__ import annotations

from sqlalchemy import case, select

from bot.store.db import Database
from bot.store.models import RateSlot


class RateSlots:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def take(
        self, team: str, method: str, *, now: float, interval_s: float, max_wait_s: float | None = None
    ) -> tuple[float, bool]:
        """Reserve the method's next slot in the workspace: (when the slot is, True). When the slot is more than
        `max_wait_s` away nothing is reserved: (when the next slot is, False)."""
        later = case((RateSlot.next_at > now, RateSlot.next_at), else_=now)
        stmt = self.db.insert(RateSlot).values(team=team, method=method, next_at=now + interval_s)
        stmt = stmt.on_conflict_do_update(
            index_elements=["team", "method"],
            set_={"next_at": later + interval_s},
            where=None if max_wait_s is None else RateSlot.next_at <= now + max_wait_s,
        ).returning(RateSlot.next_at)
        async with self.db.session() as session, session.begin():
            next_at = (await session.execute(stmt)).scalar_one_or_none()
            if next_at is None:  # the slot is further away than the caller waits
                current = select(RateSlot.next_at).where(RateSlot.team == team, RateSlot.method == method)
                return float((await session.execute(current)).scalar_one()), False
        return float(next_at) - interval_s, True

    async def defer(self, team: str, method: str, *, until: float) -> None:
        """Nobody calls the method in the workspace before `until` (a later slot already reserved stays)."""
        stmt = self.db.insert(RateSlot).values(team=team, method=method, next_at=until)
        stmt = stmt.on_conflict_do_update(
            index_elements=["team", "method"],
            set_={"next_at": case((RateSlot.next_at > until, RateSlot.next_at), else_=until)},
        )
        async with self.db.session() as session, session.begin():
            await session.execute(stmt)

    async def pending(self, now: float) -> dict[tuple[str, str], float]:
        """Every (workspace, method) that may not be called yet, with when it may."""
        stmt = select(RateSlot.team, RateSlot.method, RateSlot.next_at).where(RateSlot.next_at > now)
        async with self.db.session() as session:
            rows = (await session.execute(stmt)).all()
        return {(row.team, row.method): float(row.next_at) for row in rows}
