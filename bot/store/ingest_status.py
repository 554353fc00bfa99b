"""Per-object ingestion status: every channel, thread and member token fails, waits and recovers on its own.

    status = IngestStatusStore(db)
    if await status.is_due(ws, ObjectKind.THREAD, thread_id):
        try: ...read it...
        except PlatformObjectGoneError as exc: await status.retire(ws, ObjectKind.THREAD, thread_id, str(exc))
        except ChatPlatformError as exc: await status.failed(ws, ObjectKind.THREAD, thread_id, str(exc))
        else: await status.ok(ws, ObjectKind.THREAD, thread_id)
    rows = await status.listing(ws)      # what `askwith ingest` and the admin page show

States: `ok`; `backoff` (failed, retried after `retry_at`: exponential, or the platform's Retry-After when longer);
`retired` (the object is gone: never read again); `disabled` (a revoked member token: never used again until the
member connects anew); `paused` (an archived channel: kept, readable, not polled). Only `ok` objects, and `backoff`
ones whose time has come, are due.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from sqlalchemy import Select, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import models
from bot.store.db import Database, as_utc


BACKOFF_BASE_SECONDS = 30.0
BACKOFF_MAX_SECONDS = 3600.0
MAX_ERROR_CHARS = 500


class ObjectKind(StrEnum):
    CHANNEL = "channel"
    THREAD = "thread"
    MEMBER_TOKEN = "member_token"


class ObjectStatus(StrEnum):
    OK = "ok"
    BACKOFF = "backoff"
    RETIRED = "retired"
    DISABLED = "disabled"
    PAUSED = "paused"


@dataclass(frozen=True)
class ObjectState:
    kind: ObjectKind
    object_id: str
    status: ObjectStatus
    failures: int
    last_error: str
    retry_at: datetime | None
    updated_at: datetime


def backoff_seconds(failures: int, retry_after: float | None = None) -> float:
    """Exponential from BACKOFF_BASE_SECONDS, capped at BACKOFF_MAX_SECONDS; never shorter than `retry_after`."""
    exponential = min(BACKOFF_BASE_SECONDS * 2 ** max(failures - 1, 0), BACKOFF_MAX_SECONDS)
    return max(exponential, retry_after or 0.0)


class IngestStatusStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ reading
    async def is_due(
        self, workspace_id: int, kind: ObjectKind, object_id: str, *, now: datetime | None = None
    ) -> bool:
        return object_id not in await self.not_due(workspace_id, kind, now=now)

    async def not_due(self, workspace_id: int, kind: ObjectKind, *, now: datetime | None = None) -> set[str]:
        """Objects of `kind` a run must skip now: retired, disabled, paused, or backing off."""
        moment = now or datetime.now(UTC)
        async with self.db.session() as session:
            rows = await session.execute(
                select(models.IngestObject.object_id, models.IngestObject.status, models.IngestObject.retry_at).where(
                    models.IngestObject.workspace_id == workspace_id,
                    models.IngestObject.kind == kind.value,
                    models.IngestObject.status != ObjectStatus.OK.value,
                )
            )
            return {
                object_id
                for object_id, status, retry_at in rows.all()
                if status != ObjectStatus.BACKOFF.value or retry_at is None or as_utc(retry_at) > moment
            }

    async def get(self, workspace_id: int, kind: ObjectKind, object_id: str) -> ObjectState | None:
        async with self.db.session() as session:
            row = await self._row(session, workspace_id, kind, object_id)
            return None if row is None else _state(row)

    async def listing(self, workspace_id: int, *, problems_only: bool = False) -> list[ObjectState]:
        """Every tracked object of a workspace (or only those not `ok`), by kind and id."""
        stmt = select(models.IngestObject).where(models.IngestObject.workspace_id == workspace_id)
        if problems_only:
            stmt = stmt.where(models.IngestObject.status != ObjectStatus.OK.value)
        async with self.db.session() as session:
            rows = (
                await session.execute(stmt.order_by(models.IngestObject.kind, models.IngestObject.object_id))
            ).all()
            return [_state(row[0]) for row in rows]

    # ------------------------------------------------------------------ writing
    async def ok(self, workspace_id: int, kind: ObjectKind, object_id: str) -> None:
        """A successful read: clears failures. Only writes when the object had a status to clear."""
        async with self.db.session() as session, session.begin():
            row = await self._row(session, workspace_id, kind, object_id)
            if row is not None and (row.status != ObjectStatus.OK.value or row.failures):
                row.status, row.failures, row.retry_at = ObjectStatus.OK.value, 0, None
                row.updated_at = datetime.now(UTC)

    async def failed(
        self, workspace_id: int, kind: ObjectKind, object_id: str, error: str, *, retry_after: float | None = None
    ) -> ObjectState:
        """A transient failure: back off exponentially (or as long as the platform asked) before the next try."""
        async with self.db.session() as session, session.begin():
            row = await self._upsert(session, workspace_id, kind, object_id)
            row.failures += 1
            row.status = ObjectStatus.BACKOFF.value
            row.last_error = error[:MAX_ERROR_CHARS]
            row.updated_at = datetime.now(UTC)
            row.retry_at = row.updated_at + timedelta(seconds=backoff_seconds(row.failures, retry_after))
            return _state(row)

    async def retire(self, workspace_id: int, kind: ObjectKind, object_id: str, error: str) -> None:
        """The object is gone on the platform: never read it again."""
        await self._set(workspace_id, kind, object_id, ObjectStatus.RETIRED, error)

    async def disable(self, workspace_id: int, kind: ObjectKind, object_id: str, error: str) -> bool:
        """A revoked or refused token: never use it again. True when it was not disabled already (tell the member
        once)."""
        current = await self.get(workspace_id, kind, object_id)
        await self._set(workspace_id, kind, object_id, ObjectStatus.DISABLED, error)
        return current is None or current.status != ObjectStatus.DISABLED

    async def pause(self, workspace_id: int, kind: ObjectKind, object_id: str, reason: str) -> None:
        await self._set(workspace_id, kind, object_id, ObjectStatus.PAUSED, reason)

    async def reset(self, workspace_id: int, kind: ObjectKind, object_id: str) -> None:
        """Forget an object's status (a token granted anew, a channel unarchived or rejoined)."""
        async with self.db.session() as session, session.begin():
            await session.execute(
                delete(models.IngestObject).where(
                    models.IngestObject.workspace_id == workspace_id,
                    models.IngestObject.kind == kind.value,
                    models.IngestObject.object_id == object_id,
                )
            )

    async def _set(
        self, workspace_id: int, kind: ObjectKind, object_id: str, status: ObjectStatus, error: str
    ) -> None:
        async with self.db.session() as session, session.begin():
            row = await self._upsert(session, workspace_id, kind, object_id)
            row.status, row.last_error, row.retry_at = status.value, error[:MAX_ERROR_CHARS], None
            row.updated_at = datetime.now(UTC)

    async def _row(
        self, session: AsyncSession, workspace_id: int, kind: ObjectKind, object_id: str
    ) -> models.IngestObject | None:
        return (await session.execute(_select(workspace_id, kind, object_id))).scalar_one_or_none()

    async def _upsert(
        self, session: AsyncSession, workspace_id: int, kind: ObjectKind, object_id: str
    ) -> models.IngestObject:
        stmt = self.db.insert(models.IngestObject).values(
            workspace_id=workspace_id,
            kind=kind.value,
            object_id=object_id,
            status=ObjectStatus.OK.value,
            failures=0,
            last_error="",
            updated_at=datetime.now(UTC),
        )
        await session.execute(stmt.on_conflict_do_nothing(index_elements=["workspace_id", "kind", "object_id"]))
        return (await session.execute(_select(workspace_id, kind, object_id))).scalar_one()


def _select(workspace_id: int, kind: ObjectKind, object_id: str) -> Select[tuple[models.IngestObject]]:
    return select(models.IngestObject).where(
        models.IngestObject.workspace_id == workspace_id,
        models.IngestObject.kind == kind.value,
        models.IngestObject.object_id == object_id,
    )


def _state(row: models.IngestObject) -> ObjectState:
    return ObjectState(
        kind=ObjectKind(row.kind),
        object_id=row.object_id,
        status=ObjectStatus(row.status),
        failures=row.failures,
        last_error=row.last_error,
        retry_at=None if row.retry_at is None else as_utc(row.retry_at),
        updated_at=as_utc(row.updated_at),
    )
