"""Slack JSON -> the port's plain types, and Slack timestamps <-> datetimes and message ids.

Slack names a message by its channel and `ts` ("1700000000.000100"), unique and increasing within the channel.
The port wants a message id unique within the workspace, so a message id is `"{channel}:{ts}"`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from bot.base.time_zones import known_zone
from bot.platform.port import Channel, ChannelKind, ChatMessage, Member


# Message subtypes that carry something someone said; joins, topic changes and the like are not messages here.
SAID_SUBTYPES = frozenset({None, "thread_broadcast", "file_share", "me_message", "bot_message"})


def message_id(channel_id: str, ts: str) -> str:
    return f"{channel_id}:{ts}"


def split_message_id(value: str) -> tuple[str, str]:
    """`"C1:1700.0001"` -> `("C1", "1700.0001")`."""
    channel_id, _, ts = value.rpartition(":")
    return channel_id, ts


def ts_to_datetime(ts: str) -> datetime:
    seconds, _, fraction = ts.partition(".")
    return datetime.fromtimestamp(int(seconds), UTC).replace(microsecond=int((fraction or "0").ljust(6, "0")[:6]))


def ts_key(ts: str) -> tuple[int, int]:
    """Order Slack timestamps exactly (no float rounding)."""
    seconds, _, fraction = ts.partition(".")
    return int(seconds), int((fraction or "0").ljust(6, "0")[:6])


def member_from_slack(user: dict[str, Any]) -> Member:
    profile = user.get("profile") or {}
    display = profile.get("display_name") or profile.get("real_name") or user.get("real_name") or user["name"]
    return Member(
        id=user["id"],
        name=user.get("name") or user["id"],
        display_name=display,
        is_bot=bool(user.get("is_bot")) or user["id"] == "USLACKBOT",
        deactivated=bool(user.get("deleted")),
        time_zone=known_zone(user.get("tz")),  # the zone of the member's Slack profile ("America/Los_Angeles")
    )


def is_guest(user: dict[str, Any]) -> bool:
    """A guest, as Slack marks one: multi-channel (`is_restricted`) or single-channel (`is_ultra_restricted`)."""
    return bool(user.get("is_restricted") or user.get("is_ultra_restricted"))


def channel_kind(channel: dict[str, Any]) -> ChannelKind:
    if channel.get("is_im"):
        return ChannelKind.DM
    if channel.get("is_mpim"):
        return ChannelKind.GROUP_DM
    if channel.get("is_private") or channel.get("is_group"):
        return ChannelKind.PRIVATE
    return ChannelKind.PUBLIC


def channel_from_slack(channel: dict[str, Any], member_ids: tuple[str, ...]) -> Channel:
    kind = channel_kind(channel)
    name = channel.get("name") or ("dm-" + "-".join(member_ids) if kind == ChannelKind.DM else channel["id"])
    return Channel(id=channel["id"], name=name, kind=kind, member_ids=member_ids)


def is_message(message: dict[str, Any]) -> bool:
    """Something a member (or a bot user) said: not a join or topic change, not an integration without a user."""
    return message.get("subtype") in SAID_SUBTYPES and bool(message.get("user"))


def message_from_slack(channel_id: str, message: dict[str, Any]) -> ChatMessage:
    ts = message["ts"]
    thread_ts = message.get("thread_ts")
    is_reply = thread_ts is not None and thread_ts != ts
    return ChatMessage(
        id=message_id(channel_id, ts),
        channel_id=channel_id,
        sender_id=message["user"],
        ts=ts_to_datetime(ts),
        text=message.get("text", ""),
        thread_id=message_id(channel_id, thread_ts) if is_reply else None,
        reply_count=int(message.get("reply_count") or 0),
        edited_at=ts_to_datetime(edited) if (edited := (message.get("edited") or {}).get("ts")) else None,
    )


SLACK_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|([^>]*))?>")


def readable(text: str, names: Mapping[str, str]) -> str:
    """Mentions kept with the name beside the id, `<@U123>` -> `@Bob (<@U123>)`, so memory finds the message by
    "Bob" as well as by the id; a mention whose name is unknown stays as Slack sent it."""

    def name(match: re.Match[str]) -> str:
        known = names.get(match.group(1)) or match.group(2)
        return f"@{known} (<@{match.group(1)}>)" if known else match.group(0)

    return SLACK_MENTION.sub(name, text)


def with_readable_mentions(message: ChatMessage, names: Mapping[str, str]) -> ChatMessage:
    if "<@" not in message.text:
        return message
    return dataclasses.replace(message, text=readable(message.text, names))
