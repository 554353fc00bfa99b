"""Database leases: of the processes sharing a database, one holds a named lease at a time (the leader), until it
lets it expire; another takes it over then. Scheduled sync takes one per workspace, so several `askwith serve`
processes on one database do not each list a 50,000-member workspace.

    leases = LeaseStore(db)
    if await leases.acquire("sync:slack:T1", holder=PROCESS_ID, ttl_s=900):
        ...  # this process leads until the lease expires; acquiring again renews it
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, or_, select

from bot.store.db import Database, as_utc
from bot.store.lease_models import SyncLease


PROCESS_ID = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"  # this process, as a lease holder


class LeaseStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def acquire(self, name: str, *, holder: str = PROCESS_ID, ttl_s: float) -> bool:
        """Take or renew the lease; False while another holder's lease has not expired."""
        now = datetime.now(UTC)
        stmt = self.db.insert(SyncLease).values(name=name, holder=holder, expires_at=now + timedelta(seconds=ttl_s))
        stmt = stmt.on_conflict_do_update(
            index_elements=["name"],
            set_={"holder": stmt.excluded.holder, "expires_at": stmt.excluded.expires_at},
            where=or_(SyncLease.holder == holder, SyncLease.expires_at < now),
        )
        async with self.db.session() as session, session.begin():
            await session.execute(stmt)
            current = (await session.execute(select(SyncLease.holder).where(SyncLease.name == name))).scalar_one()
        return current == holder

    async def holder(self, name: str) -> str | None:
        """Who holds the lease now (None when nobody does or it expired)."""
        async with self.db.session() as session:
            row = (await session.execute(select(SyncLease).where(SyncLease.name == name))).scalar_one_or_none()
        if row is None or as_utc(row.expires_at) < datetime.now(UTC):
            return None
        return row.holder

    async def release(self, name: str, *, holder: str = PROCESS_ID) -> None:
        async with self.db.session() as session, session.begin():
            await session.execute(delete(SyncLease).where(SyncLease.name == name, SyncLease.holder == holder))
