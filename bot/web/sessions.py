"""Web sign-ins, kept on the server: the session cookie carries only a random session id.

    sessions = SessionStore(ttl_s=28800)
    sid = sessions.open(MemberClaim(1, "alice"))     # into the (signed) cookie
    sessions.member(sid)                             # MemberClaim, or None when ended, expired or unknown
    sessions.end(sid)                                # sign-out: a copy of the cookie stops working at once

A session lasts `ttl_s` from sign-in, however often it is used. Sessions live in the serving process: a restart
signs everyone out (members sign in again with their link), which errs on the safe side.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

from bot.web.tokens import MemberClaim


MAX_SESSIONS = 100_000  # the oldest are dropped past this, so sign-ins cannot grow memory without bound


@dataclass(frozen=True)
class _Session:
    claim: MemberClaim
    expires_at: float


class SessionStore:
    def __init__(self, *, ttl_s: float, max_sessions: int = MAX_SESSIONS) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def open(self, claim: MemberClaim, *, now: float | None = None) -> str:
        now = time.time() if now is None else now
        self._forget_expired(now)
        sid = secrets.token_urlsafe(32)
        self._sessions[sid] = _Session(claim, now + self.ttl_s)
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)
        return sid

    def member(self, sid: str, *, now: float | None = None) -> MemberClaim | None:
        session = self._sessions.get(sid)
        if session is None:
            return None
        if (time.time() if now is None else now) >= session.expires_at:
            self._sessions.pop(sid, None)
            return None
        return session.claim

    def end(self, sid: str) -> None:
        self._sessions.pop(sid, None)

    def _forget_expired(self, now: float) -> None:
        # Sessions are kept in the order they opened, all with the same lifetime: the expired ones come first.
        while self._sessions:
            sid, oldest = next(iter(self._sessions.items()))
            if oldest.expires_at > now:
                return
            self._sessions.pop(sid)

    def __len__(self) -> int:
        return len(self._sessions)
