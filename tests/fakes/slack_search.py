"""Slack's Real-time Search API (`assistant.search.context`) on the fake Slack, registered into a `FakeSlackApi`.

    search = FakeSlackSearch.install(fake_slack)       # the fake now serves assistant.search.context
    token = search.issue_action_token("UALICE")         # what Slack puts in the event a member's message raised
    search.clock.advance(600)                           # ... and it is no longer fresh

As Slack documents it: a user token (`xoxp`) searches as its user; a bot token needs the `action_token` of an event
the user raised, and searches as that user while the token is fresh (else `invalid_action_token`). Each channel type
asked for needs its scope (`search:read.public` / `.private` / `.im` / `.mpim`, else `missing_scope` naming it).
Public channels are searched whole; private channels, DMs and group DMs only where the user is a member. Results
come a page at a time (`limit` at most 20, `response_metadata.next_cursor`; a cursor not issued here is
`invalid_cursor`). The method has its own per-workspace budget of calls a minute; past it, 429 with `Retry-After`
(seconds until the minute's window ends, on the fake clock).
"""

from __future__ import annotations

import base64
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from bot.port import ChannelKind, ChatMessage
from tests.fakes.slack_api import Actor, FakeSlackApi, SlackApiError, SlackRateLimited
from tests.fakes.slack_shapes import ts_str


METHOD = "assistant.search.context"
SCOPE_OF_TYPE = {
    "public_channel": "search:read.public",
    "private_channel": "search:read.private",
    "im": "search:read.im",
    "mpim": "search:read.mpim",
}
KIND_OF_TYPE = {
    "public_channel": ChannelKind.PUBLIC,
    "private_channel": ChannelKind.PRIVATE,
    "im": ChannelKind.DM,
    "mpim": ChannelKind.GROUP_DM,
}
SEARCH_SCOPES = frozenset(SCOPE_OF_TYPE.values())
MAX_LIMIT = 20
ACTION_TOKEN_TTL_S = 60.0  # short-lived, like the interaction it came from
_WORD = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an and are at be by for from has have i in is it me my of on or our the to was we what when "
                 "where which who will with you your does do did".split())  # fmt: skip


@dataclass
class FakeClock:
    now: float = 1_000_000.0

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class FakeSlackSearch:
    api: FakeSlackApi
    per_minute: int = 20
    clock: FakeClock = field(default_factory=FakeClock)
    action_tokens: dict[str, tuple[str, float]] = field(default_factory=dict)  # token -> (user, issued at)
    calls: list[dict[str, Any]] = field(default_factory=list)  # each call's user, token kind and parameters
    _window: tuple[float, int] = (0.0, 0)  # (window start, calls in it)

    @classmethod
    def install(cls, api: FakeSlackApi, **options: Any) -> FakeSlackSearch:
        search = cls(api, **options)
        api.handlers[METHOD] = search.m_search
        return search

    def issue_action_token(self, user_id: str) -> str:
        token = f"{secrets.token_hex(3)}.{secrets.token_hex(3)}.{secrets.token_hex(6)}"
        self.action_tokens[token] = (user_id, self.clock.now)
        return token

    # ------------------------------------------------------------------ the method
    def m_search(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._spend()
        user = self._searcher(actor, params)
        types = [t for t in str(params.get("channel_types") or "public_channel").split(",") if t]
        if unknown := [t for t in types if t not in SCOPE_OF_TYPE]:
            raise SlackApiError("invalid_arguments", detail=f"unknown channel type {unknown[0]}")
        if missing := [SCOPE_OF_TYPE[t] for t in types if SCOPE_OF_TYPE[t] not in actor.scopes]:
            raise SlackApiError("missing_scope", needed=",".join(missing), provided=",".join(sorted(actor.scopes)))
        query = str(params.get("query") or "").strip()
        if not query:
            raise SlackApiError("invalid_arguments", detail="query is required")
        semantic = str(params.get("disable_semantic_search", "")).lower() not in ("1", "true")
        self.calls.append({"user": user, "token": actor.kind, "semantic": semantic, **params})
        found = self._matching(user, {KIND_OF_TYPE[t] for t in types}, query, semantic, params)
        start = self._cursor(params.get("cursor"))
        limit = max(1, min(int(params.get("limit") or MAX_LIMIT), MAX_LIMIT))
        page = found[start : start + limit]
        more = start + limit < len(found)
        context = str(params.get("include_context_messages", "")).lower() in ("1", "true")
        body = {"messages": [self._result(c, m, context) for c, m in page]}
        cursor = base64.b64encode(f"offset:{start + limit}".encode()).decode() if more else ""
        return {"results": body, "response_metadata": {"next_cursor": cursor}}

    def _spend(self) -> None:
        """One call from this workspace's budget for the method, or 429 until the minute's window ends."""
        start, used = self._window
        if self.clock.now - start >= 60:
            start, used = self.clock.now, 0
        if used >= self.per_minute:
            raise SlackRateLimited(retry_after=int(60 - (self.clock.now - start)) + 1)
        self._window = (start, used + 1)

    def _searcher(self, actor: Actor, params: dict[str, Any]) -> str:
        if actor.kind == "user":
            return actor.user_id
        issued = self.action_tokens.get(str(params.get("action_token") or ""))
        if issued is None or self.clock.now - issued[1] > ACTION_TOKEN_TTL_S:
            raise SlackApiError("invalid_action_token")
        return issued[0]

    def _cursor(self, raw: Any) -> int:
        if not raw:
            return 0
        try:
            return int(base64.b64decode(str(raw)).decode().removeprefix("offset:"))
        except ValueError as exc:
            raise SlackApiError("invalid_cursor") from exc

    # ------------------------------------------------------------------ what the user can find
    def _matching(
        self, user: str, kinds: set[ChannelKind], query: str, semantic: bool, params: dict[str, Any]
    ) -> list[tuple[str, ChatMessage]]:
        words = _words(query)
        after, before = float(params.get("after") or 0), float(params.get("before") or 0)
        scored: list[tuple[int, int, str, ChatMessage]] = []
        for channel in self.api.world.channels.values():
            if channel.kind not in kinds or (channel.kind != ChannelKind.PUBLIC and user not in channel.member_ids):
                continue
            for message in self.api.timeline.messages(channel.id):
                seconds = self.api.timeline.ts(message) / 1_000_000
                if (after and seconds <= after) or (before and seconds >= before):
                    continue
                overlap = len(words & _words(message.text))
                # Lexical: every word of the query; semantic: any shared meaning word, best overlap first.
                if overlap and (semantic or overlap == len(words)):
                    scored.append((-overlap, -self.api.timeline.ts(message), channel.id, message))
        scored.sort(key=lambda s: (s[0], s[1]))
        return [(channel_id, message) for _, _, channel_id, message in scored]

    def _result(self, channel_id: str, message: ChatMessage, context: bool) -> dict[str, Any]:
        channel = self.api.world.channels[channel_id]
        author = self.api.world.members.get(message.sender_id)
        ts = ts_str(self.api.timeline.ts(message))
        link = f"https://{self.api.world.id.lower()}.slack.example/archives/{channel_id}/p{ts.replace('.', '')}"
        body: dict[str, Any] = {
            "author_user_id": message.sender_id,
            "author_name": author.display_name if author else message.sender_id,
            "team_id": self.api.world.id,
            "channel_id": channel_id,
            "channel_name": channel.name,
            "message_ts": ts,
            "content": message.text,
            "is_author_bot": bool(author and author.is_bot),
            "permalink": link,
        }
        if context:
            body["context_messages"] = self._neighbours(channel_id, message)
        return body

    def _neighbours(self, channel_id: str, message: ChatMessage) -> dict[str, list[dict[str, Any]]]:
        messages = self.api.timeline.messages(channel_id)
        at = messages.index(message)
        before, after = messages[max(0, at - 2) : at], messages[at + 1 : at + 3]
        return {"before": [self._neighbour(m) for m in before], "after": [self._neighbour(m) for m in after]}

    def _neighbour(self, message: ChatMessage) -> dict[str, Any]:
        return {"user_id": message.sender_id, "ts": ts_str(self.api.timeline.ts(message)), "text": message.text}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP}
