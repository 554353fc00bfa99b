"""Slack's Real-time Search API (`assistant.search.context`) on the fake Slack, registered into a `FakeSlackApi`.

    search = FakeSlackSearch.install(fake_slack)       # the fake now serves assistant.search.context
    token = search.issue_action_token("UALICE")         # what Slack puts in the event a member's message raised
    search.clock.advance(600)                           # ... and it is no longer fresh

Derived from Slack's published spec (the method page and the "Using the Real-time Search API" guide; the table is
`tests.fakes.slack_methods`), in the docs' words where they give them:

- Token types: "All API calls made using a bot token require an `action_token`. API calls made using a user token do
  not require an `action_token`." A bot token searches as the user whose event carried the token while it is fresh
  (else `invalid_action_token`: "The `action_token` provided is not valid."; Slack publishes no lifetime, the fake
  keeps one for `ACTION_TOKEN_TTL_S`).
- Scopes by token type ("Token Type Allowed"): `search:read.public` Bot, User; `search:read.private`, `.mpim`, `.im`
  User only. A bot token asking for `private_channel`, `im` or `mpim` is refused `missing_scope` naming the scope (a
  bot token cannot hold it); a user token lacking a channel type's scope likewise.
- Arguments: `query` is required (`missing_query`: "Missing query."); a query over `max_query_chars` is
  `query_too_long` ("Query too long."; Slack publishes no length, the fake's is a parameter); `limit` is "up to a max
  of 20"; a cursor not issued here is `invalid_cursor` ("The cursormark provided is not valid.");
  `context_channel_id` the searcher cannot view is `context_channel_not_found`, and one naming a public channel
  scopes the search to public channels ("When calling the Real-time Search API from within a public channel ... The
  Real-time Search API will only return results from public channels").
- Availability: `feature_not_enabled` ("The feature is not available on the current workspace.") or
  `assistant_search_context_disabled` ("We're having issues returning your search results. Please wait and try
  again.") when `unavailable` is set to one of them.
- Rate limit: "For most teams, the limit is 10+ requests per minute"; past `per_minute` calls in the fake's minute,
  429 with `Retry-After`, or, with `rate_limited_in_body`, the method's own documented `rate_limited` in an HTTP 200
  body.

Public channels are searched whole; private channels, DMs and group DMs only where the user is a member.
"""

from __future__ import annotations

import base64
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from bot.platform.port import ChannelKind, ChatMessage
from tests.fakes.slack_api import Actor, FakeSlackApi, SlackApiError, SlackRateLimited
from tests.fakes.slack_methods import SEARCH_PAGE_CAP, SEARCH_SCOPE_TOKENS
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
SEARCH_SCOPES = frozenset(SCOPE_OF_TYPE.values())  # what a member's user token may hold
BOT_SEARCH_SCOPES = frozenset(s for s in SEARCH_SCOPES if "bot" in SEARCH_SCOPE_TOKENS[s])  # search:read.public
MAX_LIMIT = SEARCH_PAGE_CAP
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
    max_query_chars: int = 1000  # Slack publishes no length for `query_too_long`
    unavailable: str | None = None  # feature_not_enabled | assistant_search_context_disabled
    rate_limited_in_body: bool = False  # the method's own `rate_limited` (HTTP 200) instead of a 429
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
        if self.unavailable:
            raise SlackApiError(self.unavailable)
        self._spend()
        user = self._searcher(actor, params)
        query = str(params.get("query") or "").strip()
        if not query:
            raise SlackApiError("missing_query")
        if len(query) > self.max_query_chars:
            raise SlackApiError("query_too_long")
        types = [t for t in str(params.get("channel_types") or "public_channel").split(",") if t]
        if unknown := [t for t in types if t not in SCOPE_OF_TYPE]:
            raise SlackApiError("invalid_arguments", detail=f"unknown channel type {unknown[0]}")
        held = actor.scopes & BOT_SEARCH_SCOPES if actor.kind == "bot" else actor.scopes  # user-only: never a bot's
        if missing := [SCOPE_OF_TYPE[t] for t in types if SCOPE_OF_TYPE[t] not in held]:
            raise SlackApiError("missing_scope", needed=",".join(missing), provided=",".join(sorted(actor.scopes)))
        self.api.scopes_used.update((actor.kind, SCOPE_OF_TYPE[t]) for t in types)
        kinds = {KIND_OF_TYPE[t] for t in types}
        if context := str(params.get("context_channel_id") or ""):
            kinds = self._context_kinds(user, context, kinds)
        semantic = str(params.get("disable_semantic_search", "")).lower() not in ("1", "true")
        self.calls.append({"user": user, "token": actor.kind, "semantic": semantic, **params})
        found = self._matching(user, kinds, query, semantic, params)
        start = self._cursor(params.get("cursor"))
        limit = max(1, min(int(params.get("limit") or MAX_LIMIT), MAX_LIMIT))
        page = found[start : start + limit]
        more = start + limit < len(found)
        context_messages = str(params.get("include_context_messages", "")).lower() in ("1", "true")
        body = {"messages": [self._result(c, m, context_messages) for c, m in page]}
        cursor = base64.b64encode(f"offset:{start + limit}".encode()).decode() if more else ""
        return {"results": body, "response_metadata": {"next_cursor": cursor}}

    def _context_kinds(self, user: str, channel_id: str, kinds: set[ChannelKind]) -> set[ChannelKind]:
        """The channel types a search from this channel may return: public ones from a public channel."""
        channel = self.api.world.channels.get(channel_id)
        if channel is None or (channel.kind != ChannelKind.PUBLIC and user not in channel.member_ids):
            raise SlackApiError("context_channel_not_found")
        return kinds & {ChannelKind.PUBLIC} if channel.kind == ChannelKind.PUBLIC else kinds

    def _spend(self) -> None:
        """One call from this workspace's budget for the method, or 429 until the minute's window ends."""
        start, used = self._window
        if self.clock.now - start >= 60:
            start, used = self.clock.now, 0
        if used >= self.per_minute:
            if self.rate_limited_in_body:
                raise SlackApiError("rate_limited")
            raise SlackRateLimited(retry_after=int(60 - (self.clock.now - start)) + 1)
        self._window = (start, used + 1)

    def _searcher(self, actor: Actor, params: dict[str, Any]) -> str:
        if actor.kind == "user":
            return actor.user_id
        if actor.kind != "bot":
            raise SlackApiError("not_allowed_token_type")
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
