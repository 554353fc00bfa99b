"""Live memory on Slack: each search of an agent runs as Slack's Real-time Search API (`assistant.search.context`) on
behalf of its member, and nothing it returns is stored (see `bot.memory.live`).

Whose view: a member who connected (`/askwith connect`, with the `search:read.*` user scopes) is searched with their
own user token; otherwise, for the member who started the ask, the bot token with the `action_token` of the event
their message raised (it belongs to them, and is short-lived). A member who is neither cannot be searched: the ask
says so before it starts (`can_search`). When Slack refuses a search (the action token expired, a scope missing, the
token revoked), the member is told once, in their DM with askwith, what to do; the agent goes on without the hits.

    search = SlackLiveSearch(client, db, tokens, team_id="T1", notify=tell_member)
    await search.remember_action_token("UALICE", event["action_token"])
    results = await search.search("UALICE", LiveQuery("launch date", semantic=False, limit=10))
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import select

from adapters.slack import texts
from adapters.slack.convert import message_id
from adapters.slack.errors import platform_error
from bot.memory.source import LiveQuery, LiveResult
from bot.memory.types import MessageView
from bot.store import models
from bot.store.action_tokens import ActionTokenStore
from bot.store.db import Database
from bot.store.user_tokens import UserTokenStore


logger = logging.getLogger(__name__)

METHOD = "assistant.search.context"
SCOPE_OF_TYPE = {
    "public_channel": "search:read.public",
    "private_channel": "search:read.private",
    "im": "search:read.im",
    "mpim": "search:read.mpim",
}
SEARCH_USER_SCOPES = (*SCOPE_OF_TYPE.values(), "search:read.files", "search:read.users")
PAGE_LIMIT = 20  # Slack's most results per page
MAX_PAGES = 3  # a query never pages through more than this (the agent's limit is at most 20 anyway)
ACTION_TOKEN_KEEP_S = 15 * 60.0  # kept for the ask it started; Slack decides whether it is still good
NOTICE_EVERY_S = 10 * 60.0  # one notice per member and refusal in this long
TOLD = {"invalid_action_token": "expired", "token_expired": "expired", "missing_scope": "scope",
        "token_revoked": "revoked", "invalid_auth": "revoked", "account_inactive": "revoked"}  # fmt: skip

Notify = Callable[[str, str], Awaitable[None]]  # (member platform id, text)


class SlackLiveSearch:
    def __init__(
        self,
        client: AsyncWebClient,
        db: Database,
        tokens: UserTokenStore | None,
        *,
        team_id: str,
        notify: Notify | None = None,
        skip_channels: Callable[[str], bool] = lambda _: False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client  # the bot's
        self.db = db
        self.tokens = tokens
        self.team_id = team_id
        self.notify = notify
        self.skip_channels = skip_channels  # the members' DMs with askwith: questions, never memory
        self.clock = clock
        self.calls = 0  # searches sent to Slack (pages included), for `benchmarks/slack_live.py`
        # Action tokens live in the database (encrypted, with the members' token key), so an ask claimed by a worker
        # or resumed after a restart still searches as its member. This process's copy holds a token only while its
        # write is in flight, or for good when no key is set (then only this process can use it).
        self.action_tokens = (
            ActionTokenStore(
                db, tokens.cipher, platform="slack", workspace_external_id=team_id, keep_s=ACTION_TOKEN_KEEP_S
            )
            if tokens is not None
            else None
        )
        self._action_tokens: dict[str, tuple[str, float]] = {}  # member -> (action token, received at: wall clock)
        self._told: dict[tuple[str, str], float] = {}

    # ------------------------------------------------------------------ whose view
    async def remember_action_token(self, member_id: str, action_token: str) -> None:
        """The action token of the event a member's message raised: lets the bot search as that member, from any
        process on the database, for ACTION_TOKEN_KEEP_S."""
        entry = (action_token, time.time())
        self._action_tokens[member_id] = entry  # before any wait: an ask this process starts next finds it
        if self.action_tokens is None:
            return
        await self.action_tokens.remember(member_id, action_token)
        if self._action_tokens.get(member_id) is entry:
            del self._action_tokens[member_id]  # stored: every process reads the database's copy now

    async def _action_token(self, member_id: str) -> str | None:
        found = self._action_tokens.get(member_id)
        if found is not None and time.time() - found[1] <= ACTION_TOKEN_KEEP_S:
            return found[0]
        return None if self.action_tokens is None else await self.action_tokens.get(member_id)

    async def _user_token(self, member_id: str) -> tuple[str, tuple[str, ...]] | None:
        if self.tokens is None:
            return None
        grant = await self.tokens.get("slack", self.team_id, member_id)
        if grant is None or not any(s in grant.scopes for s in SCOPE_OF_TYPE.values()):
            return None
        return grant.token, grant.scopes

    async def can_search(self, member_platform_id: str) -> bool:
        return await self._user_token(member_platform_id) is not None or bool(
            await self._action_token(member_platform_id)
        )

    # ------------------------------------------------------------------ searching
    async def search(self, member_platform_id: str, query: LiveQuery) -> list[LiveResult]:
        client, extra = await self._client_for(member_platform_id)
        results: list[LiveResult] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            response = await self._page(member_platform_id, client, query, extra, cursor)
            results += await self._results(response, query)
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not cursor or len(results) >= query.limit:
                break
        return results[: query.limit]

    async def _client_for(self, member_id: str) -> tuple[AsyncWebClient, dict[str, Any]]:
        """The member's own token and the channel types its scopes allow, or the bot's with the action token."""
        own = await self._user_token(member_id)
        if own is not None:
            token, scopes = own
            base, retries = self.client.base_url, self.client.retry_handlers
            client = AsyncWebClient(token=token, base_url=base, retry_handlers=retries)
            return client, {"channel_types": [t for t, s in SCOPE_OF_TYPE.items() if s in scopes]}
        granted = await self._action_token(member_id) or ""
        return self.client, {"action_token": granted, "channel_types": list(SCOPE_OF_TYPE)}

    async def _page(
        self, member_id: str, client: AsyncWebClient, query: LiveQuery, extra: dict[str, Any], cursor: str | None
    ) -> Any:
        self.calls += 1
        try:
            return await client.assistant_search_context(
                query=query.text, content_types=["messages"], include_bots=False, cursor=cursor,
                limit=min(query.limit, PAGE_LIMIT), disable_semantic_search=not query.semantic,
                include_context_messages=query.context > 0, after=_unix(query.since), before=_unix(query.until),
                **extra,
            )  # fmt: skip
        except SlackApiError as exc:
            await self._tell(member_id, str(exc.response.get("error", "")), str(exc.response.get("needed") or ""))
            raise platform_error(METHOD, exc, token_owner=member_id) from exc

    async def _tell(self, member_id: str, code: str, needed: str) -> None:
        """Say once (per member and refusal, every few minutes) why their agent could not search."""
        kind = TOLD.get(code)
        last = self._told.get((member_id, code))
        if kind is None or self.notify is None or (last is not None and self.clock() - last < NOTICE_EVERY_S):
            return
        self._told[(member_id, code)] = self.clock()
        try:
            await self.notify(member_id, texts.live_search_refused(kind, needed))
        except Exception:  # noqa: BLE001 - a notice that cannot be posted never fails the search's own error
            logger.warning("could not tell %s that Slack refused a search (%s)", member_id, code)

    async def _results(self, response: Any, query: LiveQuery) -> list[LiveResult]:
        raw = [m for m in (response.get("results") or {}).get("messages") or [] if not m.get("is_author_bot")]
        raw = [m for m in raw if not self.skip_channels(str(m.get("channel_id", "")))]
        handles = await self._handles({str(m.get("author_user_id", "")) for m in raw} | _context_users(raw))
        return [_result(m, handles, query.context) for m in raw]

    async def _handles(self, user_ids: set[str]) -> dict[str, str]:
        """Members' handles as the agents know them (the directory is mirrored; messages are not)."""
        async with self.db.session() as session:
            rows = await session.execute(
                select(models.Member.platform_id, models.Member.name)
                .join(models.Workspace, models.Workspace.id == models.Member.workspace_id)
                .where(models.Workspace.platform == "slack", models.Workspace.external_id == self.team_id)
                .where(models.Member.platform_id.in_(user_ids))
            )
            return {platform_id: name for platform_id, name in rows.all()}


def _result(raw: dict[str, Any], handles: dict[str, str], context: int) -> LiveResult:
    channel_id, channel_name = str(raw.get("channel_id", "")), str(raw.get("channel_name", ""))
    author = str(raw.get("author_user_id", ""))
    message = _view(channel_id, channel_name, str(raw["message_ts"]), handles.get(author, author), raw["content"])
    if not context:
        return LiveResult(message)
    around = raw.get("context_messages") or {}

    def views(side: str) -> list[MessageView]:
        return [
            _view(channel_id, channel_name, str(m["ts"]), handles.get(str(m.get("user_id")), ""), m.get("text", ""))
            for m in around.get(side) or []
        ]

    return LiveResult(message, (*views("before")[-context:], message, *views("after")[:context]))


def _view(channel_id: str, channel_name: str, ts: str, sender: str, text: Any) -> MessageView:
    when = datetime.fromtimestamp(float(ts), UTC)
    return MessageView(message_id(channel_id, ts), channel_id, channel_name, sender, when, str(text or ""))


def _context_users(raw: list[dict[str, Any]]) -> set[str]:
    around = [m.get("context_messages") or {} for m in raw]
    return {str(c.get("user_id")) for a in around for side in ("before", "after") for c in a.get(side) or []}


def _unix(when: datetime | None) -> int | None:
    return int(when.timestamp()) if when is not None else None
