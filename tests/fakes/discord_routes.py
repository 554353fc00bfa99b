"""The routes of the fake Discord API: one small function per endpoint askwith (and discord.py's login) uses."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bot.platform.port import Channel, ChannelKind, ChatMessage
from tests.fakes.discord_limits import check_message, keep_parts
from tests.fakes.discord_shapes import (
    FORUM,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    ROLE_OVERWRITE,
    VIEW_CHANNEL,
    channel_json,
    new_id,
    thread_json,
    thread_member_json,
    user_json,
)


if TYPE_CHECKING:
    from tests.fakes.discord_api import FakeDiscordApi

EPHEMERAL = 64


@dataclass
class ApiCall:
    method: str
    path: str  # without the /api/v10 prefix
    query: dict[str, str]
    body: Any
    at: float = field(default_factory=time.monotonic)  # when it arrived (for pacing assertions)


@dataclass
class InteractionCallback:
    interaction_id: str
    token: str
    type: int  # 4 message, 5 deferred message, 6 deferred update, 7 update message
    data: dict[str, Any]

    @property
    def ephemeral(self) -> bool:
        return bool(int(self.data.get("flags") or 0) & EPHEMERAL)


@dataclass
class FollowUp:
    id: str
    token: str
    content: str
    flags: int
    original: bool  # an edit of the deferred response rather than a new message

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)


class ApiError(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def json_response(data: Any, status: int = 200) -> web.Response:
    """Always `Content-Type: application/json` exactly: discord.py parses JSON only then."""
    headers = {"Content-Type": "application/json"}
    if status == 429:
        headers["Via"] = "1.1 google"  # discord.py treats a 429 without it as a Cloudflare ban
    return web.Response(body=json.dumps(data).encode(), status=status, headers=headers)


def no_content() -> web.Response:
    return web.Response(status=204)


Handler = Callable[..., web.Response]
ID = r"(\d+)"
MAX_PAGE = 100


def routes(api: FakeDiscordApi) -> list[tuple[str, str, Handler]]:
    from tests.fakes import discord_interactions as interactions  # it builds on this module's types

    table: list[tuple[str, str, Callable[..., web.Response]]] = [
        ("GET", r"/users/@me", me),
        ("GET", r"/oauth2/applications/@me", application),
        ("GET", r"/users/@me/guilds", my_guilds),
        ("POST", r"/users/@me/channels", open_dm),
        ("GET", rf"/guilds/{ID}", guild),
        ("GET", rf"/guilds/{ID}/roles", roles),
        ("GET", rf"/guilds/{ID}/members", members),
        ("GET", rf"/guilds/{ID}/members/{ID}", member),
        ("GET", rf"/guilds/{ID}/channels", guild_channels),
        ("POST", rf"/guilds/{ID}/channels", create_guild_channel),
        ("GET", rf"/channels/{ID}", get_channel),
        ("GET", rf"/guilds/{ID}/threads/active", active_threads),
        ("GET", rf"/channels/{ID}/threads/archived/public", archived_public_threads),
        ("GET", rf"/channels/{ID}/threads/archived/private", archived_private_threads),
        ("GET", rf"/channels/{ID}/thread-members", thread_members),
        ("GET", rf"/channels/{ID}/messages", channel_messages),
        ("GET", rf"/channels/{ID}/messages/{ID}", get_message),
        ("POST", rf"/channels/{ID}/messages", create_message),
        ("PATCH", rf"/channels/{ID}/messages/{ID}", edit_message),
        ("POST", rf"/channels/{ID}/threads", create_thread),
        ("PUT", rf"/channels/{ID}/thread-members/{ID}", add_thread_member),
        ("PUT", rf"/applications/{ID}/guilds/{ID}/commands", sync_commands),
        ("PUT", rf"/applications/{ID}/commands", sync_commands),
        ("POST", r"/interactions/(\d+)/([^/]+)/callback", interactions.callback),
        ("POST", r"/webhooks/(\d+)/([^/]+)", followup),
        ("GET", r"/webhooks/(\d+)/([^/]+)/messages/@original", interactions.original),
        ("PATCH", r"/webhooks/(\d+)/([^/]+)/messages/@original", interactions.original),
        ("DELETE", r"/webhooks/(\d+)/([^/]+)/messages/@original", interactions.original),
    ]
    return [(method, pattern, partial(handler, api)) for method, pattern, handler in table]


def _ok(data: Any, status: int = 200) -> web.Response:
    return json_response(data, status)


def _error(status: int, code: int, message: str) -> ApiError:
    return ApiError(status, code, message)


# ---------------------------------------------------------------------- identity
def me(api: FakeDiscordApi, call: ApiCall) -> web.Response:
    return _ok({**api.bot_user_out(), "verified": True, "mfa_enabled": False, "flags": 0})


def application(api: FakeDiscordApi, call: ApiCall) -> web.Response:
    owner = api.world.members[api.extras.owner_id]
    return _ok(
        {
            "id": api.application_id,
            "name": "askwith",
            "icon": None,
            "description": "askwith test application",
            "bot_public": False,
            "bot_require_code_grant": False,
            "owner": user_json(owner),
            "verify_key": "00" * 32,
            "flags": 0,
            "interactions_endpoint_url": None,
        }
    )


def my_guilds(api: FakeDiscordApi, call: ApiCall) -> web.Response:
    return _ok(
        [
            {"id": g.guild_id, "name": g.guild_name, "owner": False, "permissions": "0", "features": []}
            for g in (api, *api.others)
        ]
    )


def open_dm(api: FakeDiscordApi, call: ApiCall) -> web.Response:
    channel = api.dm_with(str(call.body["recipient_id"]))
    return _ok(api.channel_out(channel.id))


# ---------------------------------------------------------------------- guild
def _check_guild(api: FakeDiscordApi, guild_id: str) -> None:
    if guild_id != api.guild_id:
        raise _error(404, 10004, "Unknown Guild")


def guild(api: FakeDiscordApi, call: ApiCall, guild_id: str) -> web.Response:
    _check_guild(api, guild_id)
    return _ok(api.guild_out())


def roles(api: FakeDiscordApi, call: ApiCall, guild_id: str) -> web.Response:
    _check_guild(api, guild_id)
    return _ok(api.guild_out()["roles"])


def members(api: FakeDiscordApi, call: ApiCall, guild_id: str) -> web.Response:
    _check_guild(api, guild_id)
    limit = int(call.query.get("limit", "1"))
    if not 1 <= limit <= 1000:
        raise _error(400, 50035, "Invalid Form Body: limit")
    after = int(call.query.get("after", "0"))
    page = [m for m in api.members_out() if int(m["user"]["id"]) > after][:limit]
    return _ok(page)


def member(api: FakeDiscordApi, call: ApiCall, guild_id: str, user_id: str) -> web.Response:
    _check_guild(api, guild_id)
    for payload in api.members_out():
        if payload["user"]["id"] == user_id:
            return _ok(payload)
    raise _error(404, 10007, "Unknown Member")


def guild_channels(api: FakeDiscordApi, call: ApiCall, guild_id: str) -> web.Response:
    _check_guild(api, guild_id)
    out = [
        channel_json(channel, api.extras, position)
        for position, channel in enumerate(api.world.channels.values())
        if channel.kind in (ChannelKind.PUBLIC, ChannelKind.PRIVATE)
    ]
    return _ok(out)


def create_guild_channel(api: FakeDiscordApi, call: ApiCall, guild_id: str) -> web.Response:
    _check_guild(api, guild_id)
    body = call.body or {}
    overwrites = [
        {"id": str(o["id"]), "type": int(o["type"]), "allow": str(o["allow"]), "deny": str(o["deny"])}
        for o in body.get("permission_overwrites", [])
    ]
    hides_everyone = any(
        o["id"] == api.guild_id and o["type"] == ROLE_OVERWRITE and int(o["deny"]) & VIEW_CHANNEL for o in overwrites
    )
    allowed_members = tuple(o["id"] for o in overwrites if o["type"] == 1 and int(o["allow"]) & VIEW_CHANNEL)
    kind = ChannelKind.PRIVATE if hides_everyone else ChannelKind.PUBLIC
    channel = api.world.add_channel(Channel(new_id(), body["name"], kind, allowed_members))
    api.extras.overwrites[channel.id] = overwrites
    return _ok(api.channel_out(channel.id), 201)


# ---------------------------------------------------------------------- channels and messages
def get_channel(api: FakeDiscordApi, call: ApiCall, channel_id: str) -> web.Response:
    return _ok(api.channel_out(channel_id))


def _messages_of(api: FakeDiscordApi, channel_id: str) -> tuple[list[ChatMessage], str | None]:
    """(the messages a channel id shows, the thread id when it is a thread)."""
    if (thread := api.public_threads().get(channel_id)) is not None:
        api.thread_access(thread)
        return api.replies(thread), channel_id
    channel = api.world.channels.get(channel_id)
    if channel is not None and channel.kind is ChannelKind.DM:
        return list(api.world.messages[channel_id]), None
    api.guild_channel(channel_id)
    if channel_id in api.forbidden:
        raise _error(403, 50001, "Missing Access")
    if api.extras.channel_types.get(channel_id) == FORUM:
        raise _error(400, 50024, "Cannot execute action on this channel type")
    return [m for m in api.world.messages[channel_id] if m.thread_id is None], None


def get_message(api: FakeDiscordApi, call: ApiCall, channel_id: str, message_id: str) -> web.Response:
    messages, _ = _messages_of(api, channel_id)
    for message in messages:
        if message.id == message_id:
            return _ok(api.message_out(message, channel_id=channel_id))
    raise _error(404, 10008, "Unknown Message")


# ---------------------------------------------------------------------- threads
def _threads_out(api: FakeDiscordApi, threads: list[Any]) -> list[dict[str, Any]]:
    return [thread_json(t, api.guild_id, len(api.replies(t))) for t in sorted(threads, key=lambda t: -int(t.id))]


def active_threads(api: FakeDiscordApi, call: ApiCall, guild_id: str) -> web.Response:
    _check_guild(api, guild_id)
    live = [t for t in api.public_threads().values() if not t.archived and api.bot_sees_thread(t)]
    return _ok({"threads": _threads_out(api, live), "members": []})


def _archived(api: FakeDiscordApi, channel_id: str, kind: int) -> web.Response:
    api.guild_channel(channel_id)
    found = [t for t in api.public_threads().values() if t.parent_id == channel_id and t.archived and t.type == kind]
    return _ok({"threads": _threads_out(api, found), "members": [], "has_more": False})


def archived_public_threads(api: FakeDiscordApi, call: ApiCall, channel_id: str) -> web.Response:
    return _archived(api, channel_id, PUBLIC_THREAD)


def archived_private_threads(api: FakeDiscordApi, call: ApiCall, channel_id: str) -> web.Response:
    if not api.bot_manages_threads:
        raise _error(403, 50013, "Missing Permissions")
    return _archived(api, channel_id, PRIVATE_THREAD)


def thread_members(api: FakeDiscordApi, call: ApiCall, thread_id: str) -> web.Response:
    thread = api.public_threads().get(thread_id)
    if thread is None:
        raise _error(404, 10003, "Unknown Channel")
    api.thread_access(thread)
    return _ok([thread_member_json(thread.id, m) for m in sorted(thread.member_ids, key=int)])


def channel_messages(api: FakeDiscordApi, call: ApiCall, channel_id: str) -> web.Response:
    limit = int(call.query.get("limit", "50"))
    if not 1 <= limit <= MAX_PAGE:
        raise _error(400, 50035, "Invalid Form Body: limit must be between 1 and 100")
    messages, _ = _messages_of(api, channel_id)
    ordered = sorted(messages, key=lambda m: int(m.id))
    if "after" in call.query:
        after = int(call.query["after"])
        page = [m for m in ordered if int(m.id) > after][:limit]
    else:
        before = int(call.query.get("before", str(1 << 63)))
        page = [m for m in ordered if int(m.id) < before][-limit:]
    return _ok([api.message_out(m, channel_id=channel_id) for m in reversed(page)])  # newest first, like Discord


def create_message(api: FakeDiscordApi, call: ApiCall, channel_id: str) -> web.Response:
    body = call.body or {}
    _, thread_id = _messages_of(api, channel_id)
    target = api.extras.threads[thread_id].parent_id if thread_id else channel_id
    if thread_id is None and (thread := api.extras.threads.get(channel_id)) is not None:
        target, thread_id = thread.parent_id, thread.id
    dm = api.world.channels.get(channel_id)
    if dm is not None and dm.kind is ChannelKind.DM and set(dm.member_ids) & api.closed_dms:
        raise _error(403, 50007, "Cannot send messages to this user")
    if channel_id in api.no_send or target in api.no_send:
        raise _error(403, 50013, "Missing Permissions")
    check_message(body)
    reference = (body.get("message_reference") or {}).get("message_id")
    if reference is not None and api.find_message(str(reference)) is None:
        raise _error(400, 50035, "Invalid Form Body: message_reference: Unknown message")
    message = api.add_bot_message(target, body.get("content") or "", thread_id=thread_id)
    keep_parts(api, message.id, body)
    if reference is not None:
        api.references[message.id] = str(reference)
    return _ok(api.message_out(message, channel_id=channel_id))


def edit_message(api: FakeDiscordApi, call: ApiCall, channel_id: str, message_id: str) -> web.Response:
    body = call.body or {}
    found = api.find_message(message_id)
    if found is None or found.sender_id != api.world.bot_id:
        raise (
            _error(404, 10008, "Unknown Message")
            if found is None
            else _error(403, 50005, "Cannot edit a message authored by another user")
        )
    check_message(body)
    keep_parts(api, message_id, body)
    message = api.edit_message(channel_id, message_id, body.get("content"))
    return _ok(api.message_out(message, channel_id=channel_id))


def create_thread(api: FakeDiscordApi, call: ApiCall, channel_id: str) -> web.Response:
    api.guild_channel(channel_id)
    body = call.body or {}
    if int(body.get("type", PRIVATE_THREAD)) != PRIVATE_THREAD:
        raise _error(400, 50035, "the fake only creates private threads without a message")
    thread = api.private_thread(channel_id, body["name"])
    return _ok(thread_json(thread, api.guild_id, 0), 201)


def add_thread_member(api: FakeDiscordApi, call: ApiCall, thread_id: str, user_id: str) -> web.Response:

    if thread_id not in api.extras.threads:
        raise _error(404, 10003, "Unknown Channel")
    api.extras.threads[thread_id].member_ids.add(user_id)
    return no_content()


def sync_commands(api: FakeDiscordApi, call: ApiCall, *ids: str) -> web.Response:
    """A bulk overwrite: `ids` is the application and, for a server's own commands, that server."""
    guild_id = ids[1] if len(ids) > 1 else ""
    served = next((g for g in [api, *api.others] if g.guild_id == guild_id), api)
    served.synced_commands[guild_id] = {str(command["name"]) for command in call.body or []}
    synced = [
        {"description": "", **command, "id": new_id(), "application_id": api.application_id, "version": "1"}
        for command in call.body or []
    ]
    return _ok(synced)


# ---------------------------------------------------------------------- interactions
def check_token(api: FakeDiscordApi, token: str) -> None:
    if token in api.expired_tokens:
        raise _error(*api.expired_tokens[token])


def followup(api: FakeDiscordApi, call: ApiCall, application_id: str, token: str) -> web.Response:

    check_token(api, token)
    body = call.body or {}
    check_message(body)
    item = FollowUp(new_id(), token, body.get("content") or "", int(body.get("flags") or 0), original=False)
    api.followups.append(item)
    keep_parts(api, item.id, body)
    if item.ephemeral:  # only the interaction's user sees it; its components can still be used
        context = api.interaction_context.get(token, {})
        api.ephemeral[item.id] = {"channel_id": context.get("channel_id"), "user_id": context.get("user_id"), **body}
    return _ok(_webhook_message(api, item))


def _webhook_message(api: FakeDiscordApi, item: Any) -> dict[str, Any]:
    return {
        "id": item.id,
        "type": 0,
        "channel_id": api.guild_id,
        "author": api.bot_user_out(),
        "content": item.content,
        "timestamp": datetime.now(UTC).isoformat(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "components": [],
        "flags": item.flags,
        "webhook_id": api.application_id,
    }
