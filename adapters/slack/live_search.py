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

Token types, as Slack's Real-time Search guide states them: `search:read.public` is allowed for "Bot, User" tokens;
`search:read.private`, `search:read.mpim` and `search:read.im` for "User" tokens only ("To use the Real-time Search
API to fetch private conversation data or to use it outside the Slack client, a user token is required"). So the bot
token (with the asker's `action_token`) searches public channels only; private channels, DMs and group DMs are
searched only with the member's own user token.

Who sees the answer: "DON'T expose messages/files to anyone who would not have access to them in Slack", and from a
public channel "The Real-time Search API will only return results from public channels". When the answer's audience
is a public channel (`hearing_in`, set where the asking event arrived), every search of that ask (colleagues' user
tokens included) asks for public channels only, scoped by `context_channel_id`; an ask whose audience is not known
(resumed elsewhere) is narrowed the same way.

Refusals: `feature_not_enabled` ("The feature is not available on the current workspace.") and
`assistant_search_context_disabled` mark live search unavailable (the first for good, the second for a while: "Please
wait and try again."), and nothing more is sent; `invalid_action_token` ends the searches made on that grant; each is
told plainly to the member. A member's own token that Slack refuses as dead (`token_revoked`, `invalid_auth`,
`account_inactive`), or that a `tokens_revoked` event names, is deleted at once (`grant_lost`): it is never sent
again, and the member is searched only as an asker's action token allows until they connect again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import texts
from adapters.slack.convert import SLACK_MENTION, message_id, readable
from adapters.slack.errors import platform_error
from adapters.slack.interactions import KnownPermalinks
from bot.errors import LiveSearchGrantError, LiveSearchUnavailableError
from bot.memory.source import LiveQuery, LiveResult
from bot.memory.types import MessageView
from bot.store.action_tokens import ActionTokenStore
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_directory import roster
from bot.store.user_tokens import UserTokenStore


logger = logging.getLogger(__name__)

METHOD = "assistant.search.context"
SCOPE_OF_TYPE = {
    "public_channel": "search:read.public",
    "private_channel": "search:read.private",
    "im": "search:read.im",
    "mpim": "search:read.mpim",
}
PUBLIC = "public_channel"
BOT_SEARCH_SCOPES = ("search:read.public",)  # the only channel-type search scope a bot token may hold
SEARCH_USER_SCOPES = tuple(SCOPE_OF_TYPE.values())  # a member's own token: every channel type they consent to
PAGE_LIMIT = 20  # Slack's most results per page
MAX_PAGES = 3  # a query never pages through more than this (the agent's limit is at most 20 anyway)
ACTION_TOKEN_KEEP_S = 15 * 60.0  # kept for the ask it started; Slack decides whether it is still good
NOTICE_EVERY_S = 10 * 60.0  # one notice per member and refusal in this long
DISABLED_RETRY_S = 10 * 60.0  # `assistant_search_context_disabled`: Slack says to wait and try again
DEAD_GRANT = frozenset({"token_revoked", "invalid_auth", "account_inactive"})  # a member's own token no longer works
TOLD = {"invalid_action_token": "expired", "token_expired": "expired", "missing_scope": "scope",
        "token_revoked": "revoked", "invalid_auth": "revoked", "account_inactive": "revoked",
        "feature_not_enabled": "unavailable", "assistant_search_context_disabled": "unavailable"}  # fmt: skip


@dataclass(frozen=True)
class Audience:
    """Who will read an ask's answer: the conversation it is posted in, `public` for a public channel, `dm` for the
    asker's own DM with askwith (any other audience, or none known, is narrowed like a public one)."""

    channel_id: str
    public: bool
    dm: bool = False


_AUDIENCE: ContextVar[Audience | None] = ContextVar("askwith_slack_audience", default=None)


def hearing_in(channel_id: str, *, public: bool, dm: bool = False) -> None:
    """The ask about to start (in this task and the tasks it spawns) is answered in this conversation."""
    _AUDIENCE.set(Audience(channel_id, public, dm))


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
        skip_channels: Callable[[str, str], bool] = lambda _id, _name: False,
        permalinks: KnownPermalinks | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client  # the bot's
        self.db = db
        self.tokens = tokens
        self.team_id = team_id
        self.notify = notify
        # (channel id, name) -> never memory: the members' DMs with askwith (questions), the agents' hidden channel
        self.skip_channels = skip_channels
        self.permalinks = permalinks  # the links results come with, for the answer's sources
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
        self._refused_grants: set[str] = set()  # action tokens Slack refused: never sent again
        self.unavailable: tuple[str, float | None] | None = None  # (Slack's code, retry at) when live search is off

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

    def drop_action_token(self, member_id: str) -> None:
        """This process's copy of a member's action token, forgotten (`/askwith forget`; the stored one goes too)."""
        self._action_tokens.pop(member_id, None)

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
        return (
            await self._user_token(member_platform_id) is not None or await self._grant(member_platform_id) is not None
        )

    async def _grant(self, member_id: str) -> str | None:
        granted = await self._action_token(member_id)
        return granted if granted and granted not in self._refused_grants else None

    @property
    def available(self) -> bool:
        """False while Slack does not offer live search to this app or workspace (what status and the log say)."""
        return self._unavailable_code() is None

    def _unavailable_code(self) -> str | None:
        """Slack's code while live search is marked unavailable, None once it may be tried again."""
        if self.unavailable is None:
            return None
        code, retry_at = self.unavailable
        if retry_at is not None and self.clock() >= retry_at:
            self.unavailable = None
            return None
        return code

    # ------------------------------------------------------------------ searching
    async def search(self, member_platform_id: str, query: LiveQuery) -> list[LiveResult]:
        if (code := self._unavailable_code()) is not None:
            await self._tell(member_platform_id, code, "")  # nothing is sent to Slack while it is off
            raise LiveSearchUnavailableError(METHOD, code)
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
        """The member's own token and the channel types its scopes allow, or the bot's with the action token and
        public channels only (the only channel type a bot token may search); narrowed to public channels when the
        answer's audience is one (or unknown)."""
        audience = _AUDIENCE.get()
        narrow = audience is None or not audience.dm
        # Slack scopes a search "from within a public channel" to public channels; a colleague may not see a private
        # one (`context_channel_not_found`), so only a public channel is named.
        public_channel = audience is not None and audience.public and bool(audience.channel_id)
        scoping = {"context_channel_id": audience.channel_id} if public_channel else {}
        own = await self._user_token(member_id)
        if own is not None:
            token, scopes = own
            base, retries = self.client.base_url, self.client.retry_handlers
            client = AsyncWebClient(token=token, base_url=base, retry_handlers=retries)
            types = [t for t, s in SCOPE_OF_TYPE.items() if s in scopes and (t == PUBLIC or not narrow)]
            return client, {"channel_types": types, **scoping}
        granted = await self._grant(member_id)
        if granted is None and await self._action_token(member_id):
            raise LiveSearchGrantError(METHOD, "invalid_action_token")  # refused earlier in this ask: not resent
        return self.client, {"action_token": granted or "", "channel_types": [PUBLIC], **scoping}

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
            code = str(exc.response.get("error", ""))
            self._note_refusal(code, extra)
            if code in DEAD_GRANT and client is not self.client:  # the member's own token (the bot's is not theirs)
                await self.grant_lost(member_id, code)
            await self._tell(member_id, code, str(exc.response.get("needed") or ""))
            raise platform_error(METHOD, exc, token_owner=member_id) from exc

    async def tokens_revoked(self, event: dict[str, Any]) -> None:
        """Slack's `tokens_revoked`: the members it names (`tokens.oauth`) revoked their own tokens."""
        for member_id in (event.get("tokens") or {}).get("oauth") or []:
            await self.grant_lost(str(member_id), "revoked on Slack")

    async def grant_lost(self, member_id: str, reason: str) -> None:
        """A member's own token no longer works: its grant is deleted, so no search sends it again."""
        if self.tokens is None:
            return
        await self.tokens.revoke("slack", self.team_id, member_id)
        logger.warning("Slack workspace %s: member %s's token is deleted (%s)", self.team_id, member_id, reason)

    def _note_refusal(self, code: str, extra: dict[str, Any]) -> None:
        """What a refusal changes beyond this call: live search off, or the grant it used never sent again."""
        if code == "feature_not_enabled":
            self.unavailable = (code, None)
        elif code == "assistant_search_context_disabled":
            self.unavailable = (code, self.clock() + DISABLED_RETRY_S)
        elif code == "invalid_action_token" and extra.get("action_token"):
            self._refused_grants.add(str(extra["action_token"]))
        if code in ("feature_not_enabled", "assistant_search_context_disabled"):
            logger.error("Slack refused live search in workspace %s (%s): live memory unavailable", self.team_id, code)

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
        raw = [m for m in raw if not self.skip_channels(str(m.get("channel_id", "")), str(m.get("channel_name", "")))]
        for m in raw:
            if self.permalinks is not None and isinstance(link := m.get("permalink"), str):
                self.permalinks.add(message_id(str(m.get("channel_id", "")), str(m["message_ts"])), link)
        roster = await self._roster({str(m.get("author_user_id", "")) for m in raw} | _users_named(raw))
        return [_result(m, roster, query.context) for m in raw]

    async def _roster(self, user_ids: set[str]) -> Roster:
        """Members' handles as the agents know them, and their display names for mentions (as the mirror renders
        them, `convert.readable`): the directory is mirrored, messages are not."""
        found = await roster(self.db, WorkspaceKey("slack", self.team_id), user_ids)
        return Roster({p: name for p, name, _ in found}, {p: shown or name for p, name, shown in found})


@dataclass(frozen=True)
class Roster:
    handles: dict[str, str]  # member id -> handle (a line's sender)
    names: dict[str, str]  # member id -> display name (a mention in a line's text)


def _result(raw: dict[str, Any], roster: Roster, context: int) -> LiveResult:
    channel_id, channel_name = str(raw.get("channel_id", "")), str(raw.get("channel_name", ""))
    author = str(raw.get("author_user_id", ""))
    sender = roster.handles.get(author, author)
    message = _view(channel_id, channel_name, str(raw["message_ts"]), sender, raw["content"], roster)
    if not context:
        return LiveResult(message)
    around = raw.get("context_messages") or {}

    def views(side: str) -> list[MessageView]:
        return [
            _view(
                channel_id,
                channel_name,
                str(m["ts"]),
                roster.handles.get(str(m.get("user_id")), ""),
                m.get("text", ""),
                roster,
            )  # fmt: skip
            for m in around.get(side) or []
        ]

    return LiveResult(message, (*views("before")[-context:], message, *views("after")[:context]))


def _view(channel_id: str, channel_name: str, ts: str, sender: str, text: Any, roster: Roster) -> MessageView:
    when = datetime.fromtimestamp(float(ts), UTC)
    said = readable(str(text or ""), roster.names)  # `<@U…>` as the mirror stores it: `@Name (<@U…>)`
    return MessageView(message_id(channel_id, ts), channel_id, channel_name, sender, when, said)


def _users_named(raw: list[dict[str, Any]]) -> set[str]:
    """The members who wrote the context lines, and the members mentioned in any line."""
    around = [m.get("context_messages") or {} for m in raw]
    lines = [c for a in around for side in ("before", "after") for c in a.get(side) or []]
    texts = [str(m.get("content") or "") for m in raw] + [str(c.get("text") or "") for c in lines]
    mentioned = {match.group(1) for text in texts for match in SLACK_MENTION.finditer(text)}
    return {str(c.get("user_id")) for c in lines} | mentioned


def _unix(when: datetime | None) -> int | None:
    return int(when.timestamp()) if when is not None else None
