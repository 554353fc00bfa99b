"""Web sign-ins in the database, so every `askwith serve` on it knows them: a member signed in through one process is
signed in on all, a restart signs no one out, and sign-out (a deleted row) ends the session everywhere at once.

The browser holds a random session id; the table holds only its SHA-256, so a copy of the table (a backup, a
read-only role) signs no one in. Each look-up is one primary-key read: no process keeps a copy it would have to
forget at sign-out.

    store = WebSessionStore(db)
    sid = await store.open(workspace_id=1, member="alice", ttl_s=28800)
    await store.member(sid)       # (1, "alice"), or None when ended, expired or unknown
    await store.end(sid)
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select

from bot.store import models
from bot.store.db import Database, as_utc


def token_hash(sid: str) -> str:
    """What the table keeps of a session id. A plain SHA-256 is enough: the id is 256 random bits, not a password."""
    return hashlib.sha256(sid.encode()).hexdigest()


class WebSessionStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def open(self, *, workspace_id: int, member: str, ttl_s: float, now: datetime | None = None) -> str:
        """A new session; returns its id (for the cookie). Sessions that expired are swept on the way."""
        now = now or datetime.now(UTC)
        sid = secrets.token_urlsafe(32)
        async with self.db.session() as session, session.begin():
            await session.execute(delete(models.WebSession).where(models.WebSession.expires_at < now))
            session.add(
                models.WebSession(
                    token_hash=token_hash(sid),
                    workspace_id=workspace_id,
                    member=member,
                    expires_at=now + timedelta(seconds=ttl_s),
                )
            )
        return sid

    async def member(self, sid: str, *, now: datetime | None = None) -> tuple[int, str] | None:
        """The (workspace id, member name) signed in with this id, or None when ended, expired or unknown."""
        stmt = select(models.WebSession).where(models.WebSession.token_hash == token_hash(sid))
        async with self.db.session() as session:
            row = (await session.execute(stmt)).scalar_one_or_none()
        if row is None or as_utc(row.expires_at) <= (now or datetime.now(UTC)):
            return None
        return row.workspace_id, row.member

    async def end(self, sid: str) -> None:
        async with self.db.session() as session, session.begin():
            await session.execute(delete(models.WebSession).where(models.WebSession.token_hash == token_hash(sid)))

    async def count(self) -> int:
        """Sessions stored (expired ones not yet swept included)."""
        async with self.db.session() as session:
            return int((await session.execute(select(func.count()).select_from(models.WebSession))).scalar_one())
