"""JSON shapes of the Discord API (v10) as the fake serves them, built from a `World` plus Discord's own extras.

A `World` knows members, channels and messages; Discord adds a guild, roles, per-channel permission overwrites,
threads as channels of their own, and snowflake ids. `GuildExtras` holds what the world lacks. By default a public
channel has no overwrites (everyone reads it) and a private one denies @everyone and allows each of its members,
which is how a Discord admin builds a private channel; tests add roles and overwrites on top.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.platform.port import Channel, ChannelKind, ChatMessage, Member


DISCORD_EPOCH_MS = 1_420_070_400_000
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
READ_MESSAGE_HISTORY = 1 << 16
ADMINISTRATOR = 1 << 3
MANAGE_THREADS = 1 << 34
EVERYONE_DEFAULT = VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY

TEXT, DM, VOICE, PUBLIC_THREAD, PRIVATE_THREAD, FORUM = 0, 1, 2, 11, 12, 15
ROLE_OVERWRITE, MEMBER_OVERWRITE = 0, 1


def snowflake(when: datetime, sequence: int = 0) -> str:
    """A Discord id for a moment: milliseconds since the Discord epoch, shifted, plus a sequence number."""
    ms = int(when.astimezone(UTC).timestamp() * 1000) - DISCORD_EPOCH_MS
    return str((ms << 22) | (sequence & 0x3FFFFF))


def snowflake_time(snowflake_id: str) -> datetime:
    return datetime.fromtimestamp(((int(snowflake_id) >> 22) + DISCORD_EPOCH_MS) / 1000, UTC)


_ids = itertools.count(1)


def new_id() -> str:
    """A fresh id (now), unique within the process."""
    return snowflake(datetime.now(UTC), next(_ids))


@dataclass
class Role:
    id: str
    name: str
    permissions: int = 0


@dataclass
class ThreadInfo:
    id: str
    parent_id: str
    name: str
    type: int = PUBLIC_THREAD
    member_ids: set[str] = field(default_factory=set)
    archived: bool = False
    owner_id: str = ""  # who started it


@dataclass
class GuildExtras:
    guild_id: str
    owner_id: str
    roles: dict[str, Role] = field(default_factory=dict)
    member_roles: dict[str, list[str]] = field(default_factory=dict)
    overwrites: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # channel id -> overwrites
    threads: dict[str, ThreadInfo] = field(default_factory=dict)
    channel_types: dict[str, int] = field(default_factory=dict)  # channel id -> Discord type (default text)

    def __post_init__(self) -> None:
        self.roles.setdefault(self.guild_id, Role(self.guild_id, "@everyone", EVERYONE_DEFAULT))

    def overwrites_for(self, channel: Channel) -> list[dict[str, Any]]:
        if channel.id in self.overwrites:
            return self.overwrites[channel.id]
        if channel.kind is ChannelKind.PUBLIC:
            return []
        return [
            overwrite(self.guild_id, ROLE_OVERWRITE, deny=VIEW_CHANNEL),
            *(overwrite(m, MEMBER_OVERWRITE, allow=VIEW_CHANNEL | READ_MESSAGE_HISTORY) for m in channel.member_ids),
        ]


def overwrite(target_id: str, kind: int, *, allow: int = 0, deny: int = 0) -> dict[str, Any]:
    return {"id": target_id, "type": kind, "allow": str(allow), "deny": str(deny)}


# ---------------------------------------------------------------------- objects
def iso(ts: datetime) -> str:
    return ts.astimezone(UTC).isoformat()


def user_json(member: Member) -> dict[str, Any]:
    return {
        "id": member.id,
        "username": member.name,
        "global_name": member.display_name,
        "discriminator": "0",
        "avatar": None,
        "bot": member.is_bot,
        "public_flags": 0,
    }


def member_json(member: Member, roles: list[str]) -> dict[str, Any]:
    return {
        "user": user_json(member),
        "nick": None,
        "roles": roles,
        "joined_at": iso(snowflake_time(member.id)) if member.id.isdigit() else "2026-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "flags": 0,
    }


def role_json(role: Role, position: int) -> dict[str, Any]:
    return {
        "id": role.id,
        "name": role.name,
        "permissions": str(role.permissions),
        "position": position,
        "color": 0,
        "hoist": False,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }


def channel_json(channel: Channel, extras: GuildExtras, position: int) -> dict[str, Any]:
    return {
        "id": channel.id,
        "type": extras.channel_types.get(channel.id, TEXT),
        "guild_id": extras.guild_id,
        "name": channel.name,
        "position": position,
        "permission_overwrites": extras.overwrites_for(channel),
        "parent_id": None,
        "topic": None,
        "nsfw": False,
        "last_message_id": None,
        "rate_limit_per_user": 0,
    }


def thread_json(thread: ThreadInfo, guild_id: str, message_count: int) -> dict[str, Any]:
    return {
        "id": thread.id,
        "type": thread.type,
        "guild_id": guild_id,
        "parent_id": thread.parent_id,
        "name": thread.name,
        "owner_id": thread.owner_id or min(thread.member_ids, key=int, default="0"),
        "message_count": message_count,
        "member_count": len(thread.member_ids),
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "thread_metadata": {
            "archived": thread.archived,
            "auto_archive_duration": 10080,
            "archive_timestamp": iso(datetime.now(UTC)),
            "locked": False,
            "invitable": thread.type == PUBLIC_THREAD,
        },
    }


def thread_member_json(thread_id: str, user_id: str) -> dict[str, Any]:
    return {"id": thread_id, "user_id": user_id, "join_timestamp": iso(datetime.now(UTC)), "flags": 0}


def dm_json(channel: Channel, recipient: Member) -> dict[str, Any]:
    return {"id": channel.id, "type": DM, "last_message_id": None, "recipients": [user_json(recipient)]}


MENTION = re.compile(r"<@!?(\d+)>")
ROLE_MENTION = re.compile(r"<@&(\d+)>")


def mentioned_ids(text: str) -> list[str]:
    """The users a message's text mentions, as Discord lists them in `mentions` (each once)."""
    return list(dict.fromkeys(MENTION.findall(text)))


def mentioned_role_ids(text: str) -> list[str]:
    return list(dict.fromkeys(ROLE_MENTION.findall(text)))


def message_json(
    message: ChatMessage,
    author: Member,
    *,
    channel_id: str,
    guild_id: str | None,
    thread: dict[str, Any] | None = None,
    components: list[dict[str, Any]] | None = None,
    flags: int = 0,
    embeds: list[dict[str, Any]] | None = None,
    mentions: list[Member] = (),  # type: ignore[assignment]
    mention_roles: list[str] = (),  # type: ignore[assignment]
    reference: str | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": message.id,
        "type": 0,
        "channel_id": channel_id,
        "author": user_json(author),
        "content": message.text,
        "timestamp": iso(message.ts),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [user_json(m) for m in mentions],
        "mention_roles": list(mention_roles),
        "attachments": [],
        "embeds": embeds or [],
        "pinned": False,
        "components": components or [],
        "flags": flags,
    }
    if guild_id is not None:
        data["guild_id"] = guild_id
    if reference is not None:
        data["type"] = 19  # a reply
        data["message_reference"] = {"message_id": reference, "channel_id": channel_id, "guild_id": guild_id}
    if thread is not None:
        data["thread"] = thread
    return data
