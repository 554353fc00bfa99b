"""A stateful fake of the Slack Web API, backed by a `World`, for the real `AsyncWebClient` to talk to.

    api = FakeSlackApi(world)
    base_url = await api.start()          # http://127.0.0.1:<port>/api/
    client = AsyncWebClient(token=api.bot_token, base_url=base_url)
    ...
    await api.stop()

It serves GET and POST (query, form and JSON bodies), checks the token type (xoxb bot / xoxp user) against the
token types Slack allows per method (`tests.fakes.slack_methods`; else `not_allowed_token_type`) and the scopes
each method needs, refuses to grant a bot token a user-only scope (Slack does not), enforces channel membership
like Slack does, paginates with cursors, and can answer 429 with a `Retry-After` header on demand (`rate_limit`).
Posts land in the world; ephemeral posts and Block Kit blocks are kept on the side for assertions.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from bot.platform.port import Channel, ChannelKind, Member
from bot.store.world import World
from tests.fakes.slack_methods import METHODS, scope_problems
from tests.fakes.slack_shapes import (
    SCOPE_PREFIX,
    SLACK_TYPE,
    SlackTimeline,
    channel_json,
    member_json,
    ts_parse,
    ts_str,
)


BOT_SCOPES = frozenset(
    "commands chat:write users:read channels:read groups:read im:read mpim:read channels:history groups:history "
    "im:history mpim:history im:write groups:write app_mentions:read assistant:write usergroups:read".split()
)
USER_SCOPES = frozenset("im:history mpim:history im:read mpim:read".split())


class SlackApiError(Exception):
    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.body = {"ok": False, "error": error, **extra}


class SlackRateLimited(Exception):
    """Raised by a method over its budget: answered 429 with `Retry-After`, as Slack does."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"rate limited for {retry_after}s")
        self.retry_after = retry_after


@dataclass(frozen=True)
class Actor:
    user_id: str
    kind: str  # bot | user
    scopes: frozenset[str]


@dataclass
class ApiCall:
    method: str
    verb: str
    token_kind: str
    params: dict[str, Any]


@dataclass
class Ephemeral:
    channel: str
    user: str
    text: str
    blocks: list[dict[str, Any]] | None


@dataclass
class FakeSlackApi:
    world: World
    bot_token: str = "xoxb-fake-bot-token"
    bot_scopes: frozenset[str] = BOT_SCOPES
    client_id: str = "1111.2222"
    client_secret: str = "fake-client-secret"
    calls: list[ApiCall] = field(default_factory=list)
    ephemerals: list[Ephemeral] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)  # posts to response_url
    blocks: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    user_tokens: dict[str, Actor] = field(default_factory=dict)
    oauth_codes: dict[str, Actor] = field(default_factory=dict)
    base_url: str = ""
    revoked_tokens: set[str] = field(default_factory=set)  # answer `token_revoked`
    archived: set[str] = field(default_factory=set)  # channel ids: readable, not writable
    failing_channels: dict[str, str] = field(default_factory=dict)  # channel id -> error its member list answers
    views: list[dict[str, Any]] = field(default_factory=list)  # modals opened (views.open)
    home_views: dict[str, dict[str, Any]] = field(default_factory=dict)  # user id -> their App Home (views.publish)
    assistant_statuses: list[tuple[str, str, str]] = field(default_factory=list)  # (channel, thread ts, status)
    suggested_prompts: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    usergroups: dict[str, list[str]] = field(default_factory=dict)  # user group id -> member ids
    used_triggers: set[str] = field(default_factory=set)  # a trigger_id works once (then `expired_trigger_id`)
    scopes_used: set[tuple[str, str]] = field(default_factory=set)  # (token kind, scope) a granted call needed
    _rate_limits: dict[str, list[int]] = field(default_factory=dict)
    _runner: web.AppRunner | None = None

    def __post_init__(self) -> None:
        if problems := scope_problems("bot", sorted(self.bot_scopes)):
            raise ValueError(f"Slack grants no bot token these scopes: {'; '.join(problems)}")
        self.timeline = SlackTimeline(self.world)
        self.guests: set[str] = set()  # members Slack lists as guests (`is_restricted`)
        self.handlers: dict[str, Callable[[Actor | None, dict[str, Any]], dict[str, Any]]] = {
            name.removeprefix("m_").replace("_", "."): getattr(self, name) for name in dir(self) if name[:2] == "m_"
        }

    # ------------------------------------------------------------------ control
    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_post("/hooks/{path:.*}", self._response_url)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}/api/"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def rate_limit(self, method: str, *, times: int = 1, retry_after: int = 0, after: int = 0) -> None:
        """After `after` more good calls, the next `times` calls of `method` answer 429 with `Retry-After`."""
        self._rate_limits[method] = [after, times, retry_after]

    def grant_user_token(self, user_id: str, scopes: frozenset[str] = USER_SCOPES) -> str:
        token = f"xoxp-{user_id}-{secrets.token_hex(4)}"
        self.user_tokens[token] = Actor(user_id, "user", scopes)
        return token

    def issue_oauth_code(self, user_id: str, scopes: frozenset[str] = USER_SCOPES) -> str:
        """What Slack hands the browser after a member approves the install."""
        code = f"code-{secrets.token_hex(4)}"
        self.oauth_codes[code] = Actor(user_id, "user", scopes)
        return code

    def issue_install_code(self, installer_id: str) -> str:
        """What Slack hands the browser after an admin approves installing the app into this workspace."""
        code = f"install-{secrets.token_hex(4)}"
        self.oauth_codes[code] = Actor(installer_id, "install", self.bot_scopes)
        return code

    def calls_to(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method == method]

    def posts(self, channel_id: str) -> list[str]:
        return [m.text for m in self.timeline.messages(channel_id) if m.sender_id == self.world.bot_id]

    # ------------------------------------------------------------------ HTTP
    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = dict(request.query)
        raw = await request.read()
        if raw and request.content_type == "application/json":
            params.update(json.loads(raw))
        elif raw:
            params.update(parse_qsl(raw.decode()))
        token = _bearer(request) or params.pop("token", None)
        actor = self._actor(token)
        self.calls.append(ApiCall(method, request.method, actor.kind if actor else "none", params))
        if self._rate_limited(method):
            self.calls[-1].verb += " -> 429"
            headers = {"Retry-After": str(self._rate_limits[method][2])}
            return web.json_response({"ok": False, "error": "ratelimited"}, status=429, headers=headers)
        try:
            if token in self.revoked_tokens:
                raise SlackApiError("token_revoked")
            body = self._dispatch(method, actor, params, request)
        except SlackApiError as exc:
            body = exc.body
        except SlackRateLimited as exc:
            self.calls[-1].verb += " -> 429"
            headers = {"Retry-After": str(exc.retry_after)}
            return web.json_response({"ok": False, "error": "ratelimited"}, status=429, headers=headers)
        return web.json_response(body)

    async def _response_url(self, request: web.Request) -> web.Response:
        """A `response_url` (commands and clicks answer through it)."""
        self.responses.append({"path": request.match_info["path"], **json.loads(await request.read())})
        return web.Response(text="ok")

    @property
    def hooks_url(self) -> str:
        return self.base_url.removesuffix("api/") + "hooks/"

    def _rate_limited(self, method: str) -> bool:
        plan = self._rate_limits.get(method)
        if not plan or plan[1] <= 0:
            return False
        if plan[0] > 0:
            plan[0] -= 1
            return False
        plan[1] -= 1
        return True

    def revoke_user_token(self, user_id: str) -> list[str]:
        """The member revoked askwith's access: their tokens answer `token_revoked` from now on."""
        tokens = [t for t, a in self.user_tokens.items() if a.user_id == user_id]
        self.revoked_tokens.update(tokens)
        return tokens

    def _actor(self, token: str | None) -> Actor | None:
        if token == self.bot_token:
            return Actor(self.world.bot_id, "bot", self.bot_scopes)
        return self.user_tokens.get(token or "")

    def _dispatch(self, method: str, actor: Actor | None, params: dict[str, Any], request: web.Request) -> dict:
        handler = self.handlers.get(method)
        if handler is None:
            raise SlackApiError("unknown_method")
        if method == "oauth.v2.access":
            return self._oauth_access(params, request)
        if actor is None:
            raise SlackApiError("not_authed" if not _bearer(request) else "invalid_auth")
        spec = METHODS.get(method)
        if spec is not None and actor.kind not in spec.tokens:
            raise SlackApiError("not_allowed_token_type")

        return {"ok": True, **handler(actor, params)}

    # ------------------------------------------------------------------ checks
    def _need(self, actor: Actor, *scopes: str, bot_only: bool = False) -> None:
        if bot_only and actor.kind != "bot":
            raise SlackApiError("not_allowed_token_type")
        missing = [s for s in scopes if s not in actor.scopes]
        if missing:
            raise SlackApiError("missing_scope", needed=",".join(missing), provided=",".join(sorted(actor.scopes)))
        self.scopes_used.update((actor.kind, s) for s in scopes)

    def _channel(self, actor: Actor, channel_id: str, verb: str) -> Channel:
        channel = self.world.channels.get(channel_id)
        if channel is None:
            raise SlackApiError("channel_not_found")
        self._need(actor, f"{SCOPE_PREFIX[channel.kind]}:{verb}")
        if actor.user_id not in channel.member_ids and not (
            channel.kind == ChannelKind.PUBLIC and actor.kind == "user"
        ):
            raise SlackApiError("not_in_channel" if channel.kind == ChannelKind.PUBLIC else "channel_not_found")
        return channel

    # ------------------------------------------------------------------ methods: identity
    def m_auth_test(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        bot = {"bot_id": f"B{self.world.bot_id}"} if actor.kind == "bot" else {}
        return {
            "team_id": self.world.id,
            "team": self.world.name,
            "user_id": actor.user_id,
            "url": "https://x/",
            **bot,
        }

    def m_users_list(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, "users:read")
        members = [self._user_json(m) for m in self.world.members.values()]
        page, cursor = _page(members, params)
        return {"members": page, "response_metadata": {"next_cursor": cursor}}

    def m_users_info(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, "users:read")
        member = self.world.members.get(params.get("user", ""))
        if member is None:
            raise SlackApiError("user_not_found")
        return {"user": self._user_json(member)}

    def _user_json(self, member: Member) -> dict[str, Any]:
        """A user object; a guest is `is_restricted` (multi-channel guest), as Slack marks one."""
        return member_json(member, self.world.id) | ({"is_restricted": True} if member.id in self.guests else {})

    # ------------------------------------------------------------------ methods: conversations
    def _listable(self, actor: Actor, params: dict[str, Any], *, member_only: bool) -> list[dict[str, Any]]:
        wanted = set(str(params.get("types") or "public_channel").split(","))
        kinds = [k for k, t in SLACK_TYPE.items() if t in wanted]
        self._need(actor, *(f"{SCOPE_PREFIX[k]}:read" for k in kinds))
        visible = [
            c
            for c in self.world.channels.values()
            if c.kind in kinds and (actor.user_id in c.member_ids or (not member_only and c.kind == "public"))
        ]
        return [channel_json(c, actor.user_id) for c in visible]

    def m_conversations_list(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        page, cursor = _page(self._listable(actor, params, member_only=False), params)
        return {"channels": page, "response_metadata": {"next_cursor": cursor}}

    def m_users_conversations(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        page, cursor = _page(self._listable(actor, params, member_only=True), params)
        return {"channels": page, "response_metadata": {"next_cursor": cursor}}

    def m_conversations_members(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("channel") in self.failing_channels:
            raise SlackApiError(self.failing_channels[params["channel"]])
        channel = self._channel(actor, params.get("channel", ""), "read")
        page, cursor = _page(list(channel.member_ids), params)
        return {"members": page, "response_metadata": {"next_cursor": cursor}}

    def m_conversations_history(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        """Newest first between `oldest` and `latest` (exclusive unless `inclusive`), `next_cursor` goes older."""
        channel = self._channel(actor, params.get("channel", ""), "history")
        top = [m for m in self.timeline.messages(channel.id) if m.thread_id is None]
        inclusive = str(params.get("inclusive", "")).lower() in ("1", "true")
        oldest, latest = ts_parse(str(params.get("oldest") or "0")), ts_parse(str(params.get("latest") or "0"))
        before = _decode_cursor(params.get("cursor")) or latest or None
        picked = [
            m
            for m in reversed(top)
            if (self.timeline.ts(m) > oldest or (inclusive and self.timeline.ts(m) == oldest))
            and (before is None or self.timeline.ts(m) < before)
        ]
        limit = int(params.get("limit") or 100)
        page, more = picked[:limit], len(picked) > limit
        cursor = _encode_cursor(self.timeline.ts(page[-1])) if more else ""
        messages = [self.timeline.message_json(m) for m in page]
        return {"messages": messages, "has_more": more, "response_metadata": {"next_cursor": cursor}}

    def m_conversations_replies(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        """The parent, then replies oldest first after `oldest`; `next_cursor` goes newer."""
        channel = self._channel(actor, params.get("channel", ""), "history")
        try:
            parent = self.timeline.find(channel.id, str(params.get("ts", "")))
        except KeyError as exc:
            raise SlackApiError("thread_not_found") from exc
        oldest = max(ts_parse(str(params.get("oldest") or "0")), _decode_cursor(params.get("cursor")) or 0)
        replies = [
            m for m in self.timeline.messages(channel.id) if m.thread_id == parent.id and self.timeline.ts(m) > oldest
        ]
        limit = int(params.get("limit") or 100)
        page, more = replies[:limit], len(replies) > limit
        cursor = _encode_cursor(self.timeline.ts(page[-1])) if more else ""
        messages = [self.timeline.message_json(m) for m in [parent, *page]]
        return {"messages": messages, "has_more": more, "response_metadata": {"next_cursor": cursor}}

    def m_conversations_info(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.world.channels.get(str(params.get("channel", "")))
        if channel is None:
            raise SlackApiError("channel_not_found")
        self._need(actor, f"{SCOPE_PREFIX[channel.kind]}:read")
        if channel.kind != ChannelKind.PUBLIC and actor.user_id not in channel.member_ids:
            raise SlackApiError("channel_not_found")  # Slack hides private conversations from non-members
        body = channel_json(channel, actor.user_id)
        body["is_archived"] = channel.id in self.archived
        return {"channel": body}

    def m_auth_revoke(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self.revoke_user_token(actor.user_id) if actor.kind == "user" else None
        return {"revoked": True}

    def m_conversations_open(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, "im:write", bot_only=True)
        user = str(params.get("users", ""))
        if user not in self.world.members:
            raise SlackApiError("user_not_found")
        return {"channel": {"id": self.world.dm(self.world.bot_id, user).id}}

    def m_conversations_create(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        private = str(params.get("is_private", "")).lower() in ("1", "true")
        self._need(actor, "groups:write" if private else "channels:manage", bot_only=True)
        name = str(params.get("name", ""))
        if any(c.name == name for c in self.world.channels.values()):
            raise SlackApiError("name_taken")
        kind = ChannelKind.PRIVATE if private else ChannelKind.PUBLIC
        channel = self.world.add_channel(Channel(f"G{len(self.world.channels):08d}", name, kind, (actor.user_id,)))
        return {"channel": channel_json(channel, actor.user_id)}

    # ------------------------------------------------------------------ methods: chat
    def m_chat_postMessage(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, "chat:write", bot_only=True)
        channel = self._channel(actor, params.get("channel", ""), "read")
        if channel.id in self.archived:
            raise SlackApiError("is_archived")
        _check_blocks(params.get("blocks"))
        ts = self.timeline.add(channel.id, actor.user_id, str(params.get("text", "")), params.get("thread_ts"))
        if params.get("blocks"):
            self.blocks[(channel.id, ts)] = _json(params["blocks"])
        message = self.timeline.message_json(self.timeline.find(channel.id, ts))
        return {"channel": channel.id, "ts": ts, "message": message}

    def m_chat_postEphemeral(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, "chat:write", bot_only=True)
        channel = self._channel(actor, params.get("channel", ""), "read")
        user = str(params.get("user", ""))
        if user not in channel.member_ids:
            raise SlackApiError("user_not_in_channel")
        blocks = _json(params["blocks"]) if params.get("blocks") else None
        self.ephemerals.append(Ephemeral(channel.id, user, str(params.get("text", "")), blocks))
        return {"message_ts": ts_str(len(self.ephemerals))}

    def m_chat_update(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, "chat:write", bot_only=True)
        channel = self._channel(actor, params.get("channel", ""), "read")
        ts = str(params.get("ts", ""))
        _check_blocks(params.get("blocks"))
        try:
            self.timeline.replace_text(channel.id, ts, str(params.get("text", "")))
        except KeyError as exc:
            raise SlackApiError("message_not_found") from exc
        self.blocks[(channel.id, ts)] = _json(params["blocks"]) if params.get("blocks") else []
        return {"channel": channel.id, "ts": ts, "text": params.get("text", "")}

    def m_chat_getPermalink(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        """A link to a message; Slack itself decides, when it is opened, whether the reader may see it."""
        channel = self._channel(actor, params.get("channel", ""), "read")
        ts = str(params.get("message_ts", ""))
        try:
            self.timeline.find(channel.id, ts)
        except KeyError as exc:
            raise SlackApiError("message_not_found") from exc
        team = self.world.id.lower()
        return {
            "channel": channel.id,
            "permalink": f"https://{team}.slack.example/archives/{channel.id}/p{ts.replace('.', '')}",
        }

    def m_usergroups_users_list(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, "usergroups:read")
        group = self.usergroups.get(str(params.get("usergroup", "")))
        if group is None:
            raise SlackApiError("no_such_subteam")
        return {"users": list(group)}

    # ------------------------------------------------------------------ methods: the Assistant side panel
    def _assistant_thread(self, actor: Actor, params: dict[str, Any]) -> tuple[str, str]:
        self._need(actor, "assistant:write", bot_only=True)
        channel = self.world.channels.get(str(params.get("channel_id", "")))
        if channel is None or channel.kind != ChannelKind.DM or actor.user_id not in channel.member_ids:
            raise SlackApiError("channel_not_found")
        thread_ts = str(params.get("thread_ts", ""))
        try:
            self.timeline.find(channel.id, thread_ts)
        except KeyError as exc:
            raise SlackApiError("invalid_thread_ts") from exc
        return channel.id, thread_ts

    def m_assistant_threads_setStatus(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self.assistant_statuses.append((*self._assistant_thread(actor, params), str(params.get("status", ""))))
        return {}

    def m_assistant_threads_setSuggestedPrompts(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        key = self._assistant_thread(actor, params)
        prompts = _json(params.get("prompts"))
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= 4:
            raise SlackApiError("invalid_arguments")
        self.suggested_prompts[key] = prompts
        return {}

    # ------------------------------------------------------------------ methods: views
    def m_views_open(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        """A modal, opened with the trigger_id of a click: unknown, reused or stale ones are refused like Slack."""
        self._need(actor, bot_only=True)
        trigger = str(params.get("trigger_id", ""))
        if not trigger.startswith("trigger-"):
            raise SlackApiError("invalid_trigger_id")
        if trigger in self.used_triggers:
            raise SlackApiError("expired_trigger_id")
        self.used_triggers.add(trigger)
        view = _json(params.get("view"))
        if not isinstance(view, dict) or view.get("type") != "modal" or len(view.get("blocks", [])) > 100:
            raise SlackApiError("invalid_arguments")
        self.views.append(view)
        return {"view": {"id": f"V{len(self.views):08d}", **view}}

    def m_views_publish(self, actor: Actor, params: dict[str, Any]) -> dict[str, Any]:
        self._need(actor, bot_only=True)
        user = str(params.get("user_id", ""))
        if user not in self.world.members:
            raise SlackApiError("user_not_found")
        view = _json(params.get("view"))
        if not isinstance(view, dict) or view.get("type") != "home" or len(view.get("blocks", [])) > 100:
            raise SlackApiError("invalid_arguments")
        _check_blocks(view.get("blocks"))
        self.home_views[user] = view
        return {"view": {"id": f"VH{user}", **view}}

    # ------------------------------------------------------------------ OAuth
    def m_oauth_v2_access(self, actor: Actor | None, params: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("dispatched through _oauth_access")

    def _oauth_access(self, params: dict[str, Any], request: web.Request) -> dict[str, Any]:
        client_id, client_secret = _basic_auth(request) or (params.get("client_id"), params.get("client_secret"))
        if (client_id, client_secret) != (self.client_id, self.client_secret):
            raise SlackApiError("invalid_client_id")
        grant = self.oauth_codes.pop(str(params.get("code", "")), None)
        if grant is None:
            raise SlackApiError("invalid_code")
        team = {"id": self.world.id, "name": self.world.name}
        if grant.kind == "install":  # the workspace's bot token, as Slack issues it to an app installed by OAuth
            scope = ",".join(sorted(grant.scopes))
            bot = {
                "access_token": self.bot_token,
                "token_type": "bot",
                "scope": scope,
                "bot_user_id": self.world.bot_id,
            }
            return {"ok": True, "app_id": "A0FAKE", "team": team, "authed_user": {"id": grant.user_id}, **bot}
        token = self.grant_user_token(grant.user_id, grant.scopes)
        authed = {"id": grant.user_id, "scope": ",".join(sorted(grant.scopes)), "access_token": token}
        return {"ok": True, "team": {"id": self.world.id, "name": self.world.name}, "authed_user": authed}


# ---------------------------------------------------------------------- helpers
def _check_blocks(raw: Any) -> None:
    """Slack's limits on Block Kit: at most 50 blocks, section / context texts up to 3000 characters, at most 25
    elements in an actions block, button values up to 2000 characters; else `invalid_blocks`."""
    if not raw:
        return
    blocks = _json(raw)
    if not isinstance(blocks, list) or len(blocks) > 50:
        raise SlackApiError("invalid_blocks")
    for block in blocks:
        texts = [block.get("text") or {}] + [e for e in block.get("elements", []) if block["type"] == "context"]
        if any(len(t.get("text", "")) > 3000 for t in texts):
            raise SlackApiError("invalid_blocks")
        if block["type"] == "actions" and (
            len(block["elements"]) > 25 or any(len(e.get("value", "")) > 2000 for e in block["elements"])
        ):
            raise SlackApiError("invalid_blocks")


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    return header.removeprefix("Bearer ") if header.startswith("Bearer ") else None


def _basic_auth(request: web.Request) -> tuple[str, str] | None:
    header = request.headers.get("Authorization", "")
    if not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header.removeprefix("Basic ")).decode().partition(":")
    return user, password


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _page(items: list[Any], params: dict[str, Any]) -> tuple[list[Any], str]:
    start = int(_cursor_text(params["cursor"])) if params.get("cursor") else 0
    limit = int(params.get("limit") or 100)
    end = start + limit
    return items[start:end], (base64.b64encode(str(end).encode()).decode() if end < len(items) else "")


def _encode_cursor(micros: int) -> str:
    return base64.b64encode(f"next_ts:{ts_str(micros)}".encode()).decode()


def _decode_cursor(cursor: Any) -> int | None:
    if not cursor:
        return None
    return ts_parse(_cursor_text(cursor).removeprefix("next_ts:"))


def _cursor_text(cursor: Any) -> str:
    """A cursor this fake handed out; anything else (expired, garbled) is refused as Slack refuses it."""
    try:
        text = base64.b64decode(str(cursor), validate=True).decode()
    except ValueError as exc:
        raise SlackApiError("invalid_cursor") from exc
    if not (text.isdigit() or text.startswith("next_ts:")):
        raise SlackApiError("invalid_cursor")
    return text
