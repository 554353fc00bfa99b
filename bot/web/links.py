"""Transcript links for chat posts: the web app's URL of an ask, signed for the one member it is posted to.

links = TranscriptLinks(settings, secret)
links.url(ask_id=7, workspace_id=1, member="alice")   # https://askwith.example/asks/7?t=...
"""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urlencode

from bot.settings import Settings
from bot.web.auth import LINK_PARAM
from bot.web.tokens import MemberClaim, sign_member_token


class TranscriptLinks:
    def __init__(self, settings: Settings, secret: str) -> None:
        self.base = settings.resolved_public_url
        self.ttl_s = settings.link_ttl_seconds
        self._secret = secret

    def url(self, *, ask_id: int, workspace_id: int, member: str, now: float | None = None) -> str:
        issued = time.time() if now is None else now
        token = sign_member_token(self._secret, MemberClaim(workspace_id, member), expires_at=issued + self.ttl_s)
        return f"{self.base}/asks/{ask_id}?{urlencode({LINK_PARAM: token})}"

    def for_workspace(self, workspace_id: int) -> Callable[[int, str], str]:
        """What `AskService(transcript_link=...)` takes: (ask id, requester handle) -> that member's link."""
        return lambda ask_id, member: self.url(ask_id=ask_id, workspace_id=workspace_id, member=member)

    def __repr__(self) -> str:  # the secret never reaches a log line
        return f"TranscriptLinks(base={self.base!r}, ttl_s={self.ttl_s})"
