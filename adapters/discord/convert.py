"""Discord API payloads (raw JSON, as discord.py's HTTP client returns them) into the port's plain types."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from bot.platform.port import Channel, ChannelKind, ChatMessage, Member


# text, voice (its text chat), announcement, stage (its text chat), forum, media: channels whose history is memory
TEXT_CHANNEL_TYPES = {0, 2, 5, 13, 15, 16}
MEMORY_MESSAGE_TYPES = {0, 19}  # default, reply; joins, pins and thread notices are not what anybody said


def member(payload: Mapping[str, Any]) -> Member:
    """A guild member: `name` is the unique username (what @mentions resolve), `display_name` what people see."""
    user = payload["user"]
    return Member(
        id=str(user["id"]),
        name=str(user["username"]),
        display_name=str(payload.get("nick") or user.get("global_name") or user["username"]),
        is_bot=bool(user.get("bot", False)),
    )


def channel(payload: Mapping[str, Any], *, public: bool, readers: tuple[str, ...]) -> Channel:
    kind = ChannelKind.PUBLIC if public else ChannelKind.PRIVATE
    name = str(payload.get("name") or payload["id"])
    return Channel(id=str(payload["id"]), name=name, kind=kind, member_ids=readers)


def private_thread(payload: Mapping[str, Any], *, parent_name: str, readers: tuple[str, ...]) -> Channel:
    """A private thread is a channel of its own in askwith: only its readers can see what is said in it."""
    name = f"{parent_name}/{payload.get('name') or payload['id']}"
    return Channel(id=str(payload["id"]), name=name, kind=ChannelKind.PRIVATE, member_ids=readers)


def is_memory(payload: Mapping[str, Any], *, bot_id: str = "") -> bool:
    """Somebody talking, not a system notice, and not an ask addressed to askwith (see `addresses_bot`)."""
    if int(payload.get("type", 0)) not in MEMORY_MESSAGE_TYPES or not payload.get("content"):
        return False
    return not (bot_id and addresses_bot(payload, bot_id))


def addresses_bot(payload: Mapping[str, Any], bot_id: str) -> bool:
    """A message that mentions the bot or replies to it is an ask (or a follow-up), not something anybody's agent
    should later find as knowledge: the question would answer itself."""
    if any(str(user["id"]) == bot_id for user in payload.get("mentions") or []):
        return True
    replied = payload.get("referenced_message") or {}
    return str((replied.get("author") or {}).get("id", "")) == bot_id


def message(
    payload: Mapping[str, Any], *, channel_id: str, thread_id: str | None, roles: Mapping[str, str] | None = None
) -> ChatMessage:
    """`channel_id` is the channel the message belongs to (a thread's parent for a reply in a thread); `roles`
    names the server's roles (id -> name) so a role mention is stored readable too."""
    thread = payload.get("thread") or {}
    return ChatMessage(
        id=str(payload["id"]),
        channel_id=channel_id,
        sender_id=str(payload["author"]["id"]),
        ts=_timestamp(str(payload["timestamp"])),
        text=readable(str(payload.get("content") or ""), mentioned_users(payload), roles or {}),
        thread_id=thread_id,
        reply_count=int(thread.get("message_count") or 0),
        edited_at=_timestamp(str(edited)) if (edited := payload.get("edited_timestamp")) else None,
    )


MENTION = re.compile(r"<@(!|&)?(\d+)>")


def mentioned_users(payload: Mapping[str, Any]) -> dict[str, str]:
    """The users a message payload mentions (Discord lists them in `mentions`), id -> the name people see."""
    names = {}
    for user in payload.get("mentions") or []:
        nick = (user.get("member") or {}).get("nick")
        names[str(user["id"])] = str(nick or user.get("global_name") or user.get("username") or user["id"])
    return names


def readable(text: str, users: Mapping[str, str], roles: Mapping[str, str]) -> str:
    """Mentions kept with their names beside them, `<@123>` -> `@Bob (<@123>)`, so memory finds the message by
    "Bob" as well as by the id; a mention whose name is unknown stays as it is."""

    def named(match: re.Match[str]) -> str:
        kind, ref = match.group(1), match.group(2)
        name = roles.get(ref) if kind == "&" else users.get(ref)
        return f"@{name} ({match.group(0)})" if name else match.group(0)

    return MENTION.sub(named, text)


def _timestamp(raw: str) -> datetime:
    ts = datetime.fromisoformat(raw)
    return ts.astimezone(UTC) if ts.tzinfo else ts.replace(tzinfo=UTC)
