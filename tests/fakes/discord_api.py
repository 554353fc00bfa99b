"""A stateful fake of Discord's HTTP API (v10), backed by a `World`, for the real discord.py client to talk to.

    api = FakeDiscordApi(world, guild_id="…", bot_token="fake-token")
    await api.start()                       # http://127.0.0.1:<port>/api/v10, with discord.http.Route.BASE patched
    await client.login(api.bot_token)       # GET /users/@me, GET /oauth2/applications/@me
    ...
    await api.stop()                        # restores Route.BASE

Every answer carries `Content-Type: application/json` exactly (discord.py only parses JSON when the header is
exactly that). It checks the bot token, enforces the bot's access to private channels (403 Missing Access),
paginates channel messages by `after`/`before`/`limit` newest first like Discord, and answers 429 with a JSON
`retry_after` on demand (`rate_limit`). Bot posts land in the world; interaction callbacks and webhook follow-ups
are kept on the side for assertions. Every request is recorded in `calls`.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import discord.gateway
import discord.http
import yarl
from aiohttp import web

from bot.platform.port import Channel, ChannelKind, ChatMessage
from bot.store.world import World
from tests.fakes.discord_limits import InvalidForm
from tests.fakes.discord_routes import (
    ApiCall,
    ApiError,
    FollowUp,
    InteractionCallback,
    json_response,
    routes,
)
from tests.fakes.discord_shapes import (
    FORUM,
    MANAGE_THREADS,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    GuildExtras,
    Role,
    ThreadInfo,
    channel_json,
    dm_json,
    member_json,
    mentioned_ids,
    mentioned_role_ids,
    message_json,
    new_id,
    role_json,
    thread_json,
    user_json,
)


API_PREFIX = "/api/v10"


@dataclass
class _RateLimit:
    method: str
    path: re.Pattern[str]
    retry_after: float
    times: int


@dataclass
class FakeDiscordApi:
    world: World
    guild_id: str
    bot_token: str = "fake-discord-bot-token"
    application_id: str = "900000000000000001"
    guild_name: str = "Acme"
    owner_id: str = ""  # the server's owner (who reads every channel); default: the human with the lowest id
    extras: GuildExtras = field(init=False)
    calls: list[ApiCall] = field(default_factory=list)
    callbacks: list[InteractionCallback] = field(default_factory=list)
    followups: list[FollowUp] = field(default_factory=list)
    components: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # message id -> components
    embeds: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # message id -> embeds
    references: dict[str, str] = field(default_factory=dict)  # message id -> the message it replies to
    no_send: set[str] = field(default_factory=set)  # channels/threads where the bot lacks Send Messages (403/50013)
    gone_interactions: set[str] = field(default_factory=set)  # tokens whose callback answers 404/10062
    late_interactions: dict[str, str] = field(default_factory=dict)  # token -> I/O awaited before its first answer
    acknowledged: set[str] = field(default_factory=set)  # interaction tokens already answered (40060 the second time)
    originals: dict[str, str] = field(default_factory=dict)  # interaction token -> its response message id
    ephemeral: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> an ephemeral message (only its user)
    interaction_context: dict[str, dict[str, Any]] = field(default_factory=dict)  # token -> channel, user, message
    expired_tokens: dict[str, tuple[int, int, str]] = field(default_factory=dict)  # token -> status, code, text
    closed_dms: set[str] = field(default_factory=set)  # members who accept no DMs from server bots
    forbidden: set[str] = field(default_factory=set)  # channels whose history the bot may no longer read
    others: list[FakeDiscordApi] = field(default_factory=list)  # more servers the bot is in, served from here
    # Command names synced to one server (its id) or globally (""); an interaction names its command's server only
    # for a server's own command, as Discord does.
    synced_commands: dict[str, set[str]] = field(default_factory=dict)
    rate_limited: list[ApiCall] = field(default_factory=list)
    _limits: list[_RateLimit] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _old_base: str = ""
    _old_gateway: yarl.URL = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    _changed: asyncio.Event | None = None

    def __post_init__(self) -> None:
        humans = sorted((m for m in self.world.members if m != self.world.bot_id), key=int)
        owner = self.owner_id or (humans[0] if humans else self.world.bot_id)
        self.extras = GuildExtras(self.guild_id, owner_id=owner)
        # The invite grants the bot Manage Threads through its own role, so it sees every private thread.
        bot_role = Role(new_id(), "askwith", MANAGE_THREADS)
        self.extras.roles[bot_role.id] = bot_role
        self.extras.member_roles[self.world.bot_id] = [bot_role.id]

    @property
    def bot_manages_threads(self) -> bool:
        roles = [self.extras.roles[r] for r in self.extras.member_roles.get(self.world.bot_id, [])]
        return any(role.permissions & MANAGE_THREADS for role in roles)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", API_PREFIX + "/{path:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}{API_PREFIX}"
        self._old_base = discord.http.Route.BASE
        discord.http.Route.BASE = self.base_url
        # The gateway websocket goes to DEFAULT_GATEWAY, not through Route.BASE: point it here too, so no test ever
        # reaches for the real Discord (this fake has no gateway; a client that tries gets a local 404 and retries).
        self._old_gateway = discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(f"ws://127.0.0.1:{port}/gateway/")
        self._changed = asyncio.Event()
        return self.base_url

    async def stop(self) -> None:
        discord.http.Route.BASE = self._old_base or discord.http.Route.BASE
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = self._old_gateway
        if self._runner is not None:
            await self._runner.cleanup()

    # ------------------------------------------------------------------ test controls
    def add_guild(self, other: FakeDiscordApi) -> None:
        """The bot is in another server too: `other` (never started itself) answers every call naming its server,
        channels or threads, from this fake's address. The bot is the same user in both."""
        other.world.bot_id = self.world.bot_id
        other._changed = self._changed
        self.others.append(other)

    def owns(self, kind: str, object_id: str) -> bool:
        if kind == "guilds":
            return object_id == self.guild_id
        return object_id in self.world.channels or object_id in self.public_threads()

    def _owner(self, path: str) -> FakeDiscordApi:
        if (match := re.match(r"/(guilds|channels)/(\d+)", path)) is not None:
            for other in self.others:
                if other.owns(match.group(1), match.group(2)):
                    return other
        return self

    def rate_limit(self, method: str, path_pattern: str, *, retry_after: float = 0.05, times: int = 1) -> None:
        """Answer the next `times` matching requests with 429 and a JSON `retry_after`."""
        self._limits.append(_RateLimit(method, re.compile(path_pattern), retry_after, times))

    def expire(self, token: str, *, forgotten: bool = False) -> None:
        """An interaction token past its 15 minutes: its webhook answers 401 Invalid Webhook Token (50027), as real
        Discord does; `forgotten=True` answers 404 Unknown Webhook (10015), as it does for a token it dropped."""
        self.expired_tokens[token] = (
            (404, 10015, "Unknown Webhook") if forgotten else (401, 50027, "Invalid Webhook Token")
        )

    def forbid(self, channel_id: str) -> None:
        """The bot loses Read Message History in a channel it still lists: reading it answers 403/50001."""
        self.forbidden.add(channel_id)

    def vanish_thread(self, thread_id: str) -> None:
        """A thread is deleted with its replies: reading it answers 404/10003 Unknown Channel."""
        self.extras.threads.pop(thread_id, None)
        for messages in self.world.messages.values():
            messages[:] = [m for m in messages if m.thread_id != thread_id]

    def refuse_posts(self, channel_id: str) -> None:
        """The bot may read a channel or thread but not post in it: posting answers 403/50013 Missing Permissions."""
        self.no_send.add(channel_id)

    def forget_interaction(self, token: str) -> None:
        """Discord no longer knows an interaction (its 3 s to respond passed): its callback answers 404/10062."""
        self.gone_interactions.add(token)

    def close_dms(self, member_id: str) -> None:
        """The member turned off DMs from server members: opening the DM works, sending in it answers 403/50007."""
        self.closed_dms.add(member_id)

    async def wait_for(self, condition: Callable[[], Any], *, timeout: float = 10.0) -> Any:
        """Until `condition()` is truthy (checked after every request); returns its value."""
        assert self._changed is not None, "start() the fake first"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (value := condition()):
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met in {timeout}s; last calls: {self.calls[-5:]}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.05))
            except TimeoutError:
                pass
        return value

    def requests(self, method: str, path_pattern: str) -> list[ApiCall]:
        pattern = re.compile(path_pattern)
        return [c for c in self.calls if c.method == method and pattern.fullmatch(c.path)]

    def followups_for(self, token: str) -> list[FollowUp]:
        return [f for f in self.followups if f.token == token]

    # ------------------------------------------------------------------ plumbing
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path.removeprefix(API_PREFIX)
        raw = await request.read()
        body = json.loads(raw) if raw and request.content_type == "application/json" else None
        call = ApiCall(request.method, path, dict(request.query), body)
        self.calls.append(call)
        try:
            if (limited := self._take_limit(call)) is not None:
                self.rate_limited.append(call)
                body = {"message": "You are being rate limited.", "retry_after": limited, "global": False}
                return json_response(body, 429)
            if not self._authorized(request, path):
                return json_response({"message": "401: Unauthorized", "code": 0}, 401)
            return self._owner(path)._dispatch(call)
        finally:
            if self._changed is not None:
                self._changed.set()

    def _take_limit(self, call: ApiCall) -> float | None:
        for limit in self._limits:
            if limit.times > 0 and limit.method == call.method and limit.path.fullmatch(call.path):
                limit.times -= 1
                return limit.retry_after
        return None

    def _authorized(self, request: web.Request, path: str) -> bool:
        if path.startswith(("/interactions/", "/webhooks/")):
            return True  # authorised by the interaction token in the path
        return request.headers.get("Authorization") == f"Bot {self.bot_token}"

    def _dispatch(self, call: ApiCall) -> web.Response:
        for method, pattern, handler in self._routes():
            if method == call.method and (match := re.fullmatch(pattern, call.path)):
                try:
                    return handler(call, *match.groups())
                except ApiError as exc:
                    return json_response({"message": exc.message, "code": exc.code}, exc.status)
                except InvalidForm as exc:
                    return json_response({"message": f"Invalid Form Body: {exc.detail}", "code": 50035}, 400)
        return json_response({"message": "404: Not Found", "code": 0}, 404)

    def _routes(self) -> list[tuple[str, str, Callable[..., web.Response]]]:
        return routes(self)

    # ------------------------------------------------------------------ world helpers used by the routes
    def bot_can_see(self, channel: Channel) -> bool:
        if channel.kind is ChannelKind.PUBLIC:
            return True
        return self.world.bot_id in channel.member_ids

    def guild_channel(self, channel_id: str) -> Channel:
        channel = self.world.channels.get(channel_id)
        if channel is None or channel.kind not in (ChannelKind.PUBLIC, ChannelKind.PRIVATE):
            raise ApiError(404, 10003, "Unknown Channel")
        if not self.bot_can_see(channel):
            raise ApiError(403, 50001, "Missing Access")
        return channel

    def public_threads(self) -> dict[str, ThreadInfo]:
        """Threads started from a message (their id is the message's id), as the world's replies imply."""
        for channel_id, messages in self.world.messages.items():
            for message in messages:
                if message.thread_id and message.thread_id not in self.extras.threads:
                    self.extras.threads[message.thread_id] = ThreadInfo(
                        message.thread_id, channel_id, f"thread {message.thread_id}", PUBLIC_THREAD
                    )
        return self.extras.threads

    def thread_access(self, thread: ThreadInfo) -> None:
        """Raise what Discord answers when the bot may not read a thread."""
        parent = self.guild_channel(thread.parent_id)
        if thread.type == PRIVATE_THREAD and not (self.world.bot_id in thread.member_ids or self.bot_manages_threads):
            raise ApiError(403, 50001, "Missing Access")
        del parent

    def bot_sees_thread(self, thread: ThreadInfo) -> bool:
        try:
            self.thread_access(thread)
        except ApiError:
            return False
        return True

    def open_private_thread(self, parent_id: str, name: str, member_ids: list[str]) -> ThreadInfo:
        """A member starts a private thread and adds people to it (the thread's members)."""
        thread = ThreadInfo(new_id(), parent_id, name[:100], PRIVATE_THREAD, set(member_ids), owner_id=member_ids[0])
        self.extras.threads[thread.id] = thread
        return thread

    def make_forum(self, channel_id: str) -> None:
        self.extras.channel_types[channel_id] = FORUM

    def forum_post(self, forum_id: str, author_id: str, title: str, text: str) -> ThreadInfo:
        """A forum post: a public thread whose first message (same id as the thread) is the post itself."""
        thread = ThreadInfo(new_id(), forum_id, title[:100], PUBLIC_THREAD, owner_id=author_id)
        self.extras.threads[thread.id] = thread
        self.world.add_message(forum_id, author_id, text, thread_id=thread.id, message_id=thread.id)
        return thread

    def replies(self, thread: ThreadInfo) -> list[ChatMessage]:
        return [m for m in self.world.messages.get(thread.parent_id, []) if m.thread_id == thread.id]

    def message_out(self, message: ChatMessage, *, channel_id: str | None = None) -> dict[str, Any]:
        channel = self.world.channels[message.channel_id]
        guild_id = None if channel.kind in (ChannelKind.DM, ChannelKind.GROUP_DM) else self.guild_id
        thread = self.public_threads().get(message.id)
        payload = message_json(
            message,
            self.world.members[message.sender_id],
            channel_id=channel_id or message.thread_id or message.channel_id,
            guild_id=guild_id,
            thread=thread_json(thread, self.guild_id, len(self.replies(thread))) if thread else None,
            components=self.components.get(message.id),
            embeds=self.embeds.get(message.id),
            mentions=[self.world.members[m] for m in mentioned_ids(message.text) if m in self.world.members],
            mention_roles=[r for r in mentioned_role_ids(message.text) if r in self.extras.roles],
            reference=self.references.get(message.id),
        )
        replied = self.find_message(self.references.get(message.id, ""))
        if replied is not None:  # Discord includes the message replied to (one level deep)
            author = self.world.members[replied.sender_id]
            payload["referenced_message"] = message_json(
                replied, author, channel_id=replied.thread_id or replied.channel_id, guild_id=guild_id
            )
        return payload

    def shown(self, message_id: str) -> str:
        """Everything a message shows as text: its content, then each embed's title, description, fields, footer."""
        found = self.find_message(message_id)
        parts = [found.text if found else str(self.ephemeral.get(message_id, {}).get("content") or "")]
        for embed in self.embeds.get(message_id, []):
            parts += [embed.get("title") or "", embed.get("description") or ""]
            parts += [f"{f['name']}\n{f['value']}" for f in embed.get("fields") or []]
            parts.append((embed.get("footer") or {}).get("text") or "")
        return "\n".join(p for p in parts if p)

    def messages_in(self, channel_or_thread_id: str) -> list[ChatMessage]:
        """What a channel, DM or thread shows, oldest first."""
        if (thread := self.public_threads().get(channel_or_thread_id)) is not None:
            return self.replies(thread)
        return [m for m in self.world.messages.get(channel_or_thread_id, []) if m.thread_id is None]

    def find_message(self, message_id: str) -> ChatMessage | None:
        for messages in self.world.messages.values():
            for message in messages:
                if message.id == message_id:
                    return message
        return None

    def add_bot_message(self, channel_id: str, text: str, *, thread_id: str | None = None) -> ChatMessage:
        return self.world.add_message(
            channel_id, self.world.bot_id, text, ts=datetime.now(UTC), thread_id=thread_id, message_id=new_id()
        )

    def edit_message(self, channel_id: str, message_id: str, text: str | None) -> ChatMessage:
        found = self.find_message(message_id)
        messages = self.world.messages[found.channel_id if found else channel_id]
        for index, message in enumerate(messages):
            if message.id == message_id:
                if text is not None:
                    messages[index] = replace(message, text=text)
                return messages[index]
        raise ApiError(404, 10008, "Unknown Message")

    def delete_message(self, message: ChatMessage) -> None:
        messages = self.world.messages[message.channel_id]
        messages[:] = [m for m in messages if m.id != message.id]

    def remove_member(self, member_id: str) -> None:
        """A member leaves the server: gone from the member list, every role and every thread."""
        self.world.members[member_id] = replace(self.world.members[member_id], deactivated=True)
        self.extras.member_roles.pop(member_id, None)
        for thread in self.extras.threads.values():
            thread.member_ids.discard(member_id)

    def dm_with(self, user_id: str) -> Channel:
        for channel in self.world.channels.values():
            if channel.kind is ChannelKind.DM and set(channel.member_ids) == {self.world.bot_id, user_id}:
                return channel
        if user_id not in self.world.members:
            raise ApiError(404, 10013, "Unknown User")
        return self.world.add_channel(Channel(new_id(), f"dm-{user_id}", ChannelKind.DM, (self.world.bot_id, user_id)))

    def channel_out(self, channel_id: str) -> dict[str, Any]:
        if (thread := self.public_threads().get(channel_id)) is not None:
            return thread_json(thread, self.guild_id, len(self.replies(thread)))
        channel = self.world.channels.get(channel_id)
        if channel is not None and channel.kind is ChannelKind.DM:
            other = next(m for m in channel.member_ids if m != self.world.bot_id)
            return dm_json(channel, self.world.members[other])
        position = list(self.world.channels).index(channel_id) if channel_id in self.world.channels else 0
        return channel_json(self.guild_channel(channel_id), self.extras, position)

    def guild_out(self) -> dict[str, Any]:
        roles = [role_json(role, i) for i, role in enumerate(self.extras.roles.values())]
        return {
            "id": self.guild_id,
            "name": self.guild_name,
            "owner_id": self.extras.owner_id,
            "roles": roles,
            "emojis": [],
            "stickers": [],
            "features": [],
            "icon": None,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "nsfw_level": 0,
        }

    def members_out(self) -> list[dict[str, Any]]:
        ordered = sorted(self.world.members.values(), key=lambda m: int(m.id))
        return [member_json(m, self.extras.member_roles.get(m.id, [])) for m in ordered if not m.deactivated]

    def bot_user_out(self) -> dict[str, Any]:
        return user_json(self.world.members[self.world.bot_id])

    def private_thread(self, parent_id: str, name: str) -> ThreadInfo:
        thread = ThreadInfo(new_id(), parent_id, name[:100], PRIVATE_THREAD, {self.world.bot_id})
        self.extras.threads[thread.id] = thread
        return thread
