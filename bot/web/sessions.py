"""Web sign-ins, kept on the server: the session cookie carries only a random session id, the database
(`bot.store.web_sessions`) its hash and the member.

    sessions = SessionStore(ttl_s=28800)
    sid = await sessions.open(db, MemberClaim(1, "alice"))   # into the (signed) cookie
    await sessions.member(db, sid)                           # MemberClaim, or None when ended, expired or unknown
    await sessions.end(db, sid)                              # sign-out: a copy of the cookie stops working at once

A session lasts `ttl_s` from sign-in, however often it is used. Every process serving the same database shares the
sessions: a member signed in through one `askwith serve` is signed in on the others and after a restart, and
sign-out ends the session on all of them at once (nothing is cached in a process).
"""

from __future__ import annotations

from datetime import datetime

from bot.store.db import Database
from bot.store.web_sessions import WebSessionStore
from bot.web.tokens import MemberClaim


class SessionStore:
    def __init__(self, *, ttl_s: float) -> None:
        self.ttl_s = ttl_s

    async def open(self, db: Database, claim: MemberClaim, *, now: datetime | None = None) -> str:
        return await WebSessionStore(db).open(
            workspace_id=claim.workspace_id, member=claim.member, ttl_s=self.ttl_s, now=now
        )

    async def member(self, db: Database, sid: str, *, now: datetime | None = None) -> MemberClaim | None:
        found = await WebSessionStore(db).member(sid, now=now)
        return None if found is None else MemberClaim(*found)

    async def end(self, db: Database, sid: str) -> None:
        await WebSessionStore(db).end(sid)
