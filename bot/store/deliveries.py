"""The inbound delivery log: platforms redeliver (Slack retries with `X-Slack-Retry-Num`), askwith acts once.

if await DeliveryLog(db).first_time("slack", "command:T1:trigger-123"):
    ...  # act

Entries older than RETENTION are pruned as deliveries come in (at most once per PRUNE_INTERVAL_S per process), so
the table holds about a day of deliveries however long askwith runs.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from bot.store import models
from bot.store.db import Database


RETENTION = timedelta(days=1)  # platforms redeliver within minutes (Slack: 3 retries over about half an hour)
PRUNE_INTERVAL_S = 600.0


class DeliveryLog:
    def __init__(self, db: Database, *, retention: timedelta = RETENTION) -> None:
        self.db = db
        self.retention = retention
        self._next_prune = 0.0  # monotonic time of the next pruning

    async def first_time(self, platform: str, key: str) -> bool:
        """Record a delivery; True only for the first delivery with this key (atomic across processes)."""
        if time.monotonic() >= self._next_prune:
            self._next_prune = time.monotonic() + PRUNE_INTERVAL_S
            await self.forget_older_than(self.retention)
        insert = pg_insert if self.db.dialect == "postgresql" else sqlite_insert
        stmt = (
            insert(models.InboundDelivery)
            .values(platform=platform, key=key[:256], received_at=datetime.now(UTC))
            .on_conflict_do_nothing(index_elements=["platform", "key"])
            .returning(models.InboundDelivery.id)
        )
        async with self.db.session() as session, session.begin():
            return (await session.execute(stmt)).first() is not None

    async def forget_older_than(self, age: timedelta) -> int:
        """Drop entries older than any redelivery could be (Slack retries within minutes)."""
        async with self.db.session() as session, session.begin():
            result = await session.execute(
                delete(models.InboundDelivery).where(models.InboundDelivery.received_at < datetime.now(UTC) - age)
            )
            return result.rowcount or 0
