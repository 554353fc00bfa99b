"""How the fake Slack Web API presents a `World`: Slack ids, message timestamps and JSON shapes.

Slack identifies a message by its channel and a `ts` string ("1700000000.000100"), unique and increasing within a
channel. `SlackTimeline` gives every world message such a ts (derived from its datetime, nudged to stay unique) and
maps both ways.
"""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.platform.port import Channel, ChannelKind, ChatMessage, Member
from bot.store.world import MemberPolicy, World


SCOPE_PREFIX = {
    ChannelKind.PUBLIC: "channels",
    ChannelKind.PRIVATE: "groups",
    ChannelKind.DM: "im",
    ChannelKind.GROUP_DM: "mpim",
}
SLACK_TYPE = {
    ChannelKind.PUBLIC: "public_channel",
    ChannelKind.PRIVATE: "private_channel",
    ChannelKind.DM: "im",
    ChannelKind.GROUP_DM: "mpim",
}
BOT_ID = "B0ASKWITH"
_new_ids = itertools.count(1)
TOMBSTONE_TEXT = "This message was deleted."


def ts_of(when: datetime) -> int:
    """Microseconds since the epoch."""
    return int(when.timestamp()) * 1_000_000 + when.microsecond


def ts_str(micros: int) -> str:
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


def ts_parse(text: str) -> int:
    seconds, _, fraction = text.partition(".")
    return int(seconds) * 1_000_000 + int((fraction or "0").ljust(6, "0")[:6])


class SlackTimeline:
    """World message id <-> Slack ts, per channel."""

    def __init__(self, world: World) -> None:
        self.world = world
        self._ts: dict[str, int] = {}  # world message id -> ts micros
        self._by_ts: dict[tuple[str, int], ChatMessage] = {}
        self._last: dict[str, int] = {}
        self.tombstones: set[str] = set()  # ids of deleted thread parents whose replies remain
        self._reply_index: dict[str, tuple[int, dict[str, list[ChatMessage]]]] = {}
        for channel_id, messages in world.messages.items():
            for message in messages:
                self._assign(channel_id, message, ts_of(message.ts))

    def _assign(self, channel_id: str, message: ChatMessage, wanted: int) -> int:
        micros = max(wanted, self._last.get(channel_id, 0) + 1)
        self._last[channel_id] = micros
        self._ts[message.id] = micros
        self._by_ts[(channel_id, micros)] = message
        return micros

    def add(
        self, channel_id: str, sender_id: str, text: str, thread_ts: str | None, *, message_id: str | None = None
    ) -> str:
        thread_id = self.find(channel_id, thread_ts).id if thread_ts else None
        message = self.world.add_message(
            channel_id,
            sender_id,
            text,
            ts=datetime.now(UTC),
            thread_id=thread_id,
            message_id=message_id or f"t{next(_new_ids):09d}",  # unique even after deletions
        )
        return ts_str(self._assign(channel_id, message, ts_of(message.ts)))

    def remove(self, channel_id: str, ts: str) -> None:
        """The message is deleted (a parent with replies becomes a tombstone instead: see `tombstones`)."""
        message = self.find(channel_id, ts)
        self.world.messages[channel_id].remove(message)
        del self._by_ts[(channel_id, ts_parse(ts))]

    def find(self, channel_id: str, ts: str) -> ChatMessage:
        message = self._by_ts.get((channel_id, ts_parse(ts)))
        if message is None:
            raise KeyError(ts)
        return message

    def replace_text(self, channel_id: str, ts: str, text: str) -> None:
        old = self.find(channel_id, ts)
        new = dataclasses.replace(old, text=text)
        messages = self.world.messages[channel_id]
        messages[messages.index(old)] = new
        self._by_ts[(channel_id, ts_parse(ts))] = new

    def ts(self, message: ChatMessage) -> int:
        return self._ts[message.id]

    def messages(self, channel_id: str) -> list[ChatMessage]:
        return sorted(self.world.messages[channel_id], key=self.ts)

    def _replies(self, channel_id: str) -> dict[str, list[ChatMessage]]:
        """Replies by parent id, rebuilt when the channel's messages changed in number (a big channel is not
        scanned once per message listed)."""
        messages = self.world.messages[channel_id]
        cached = self._reply_index.get(channel_id)
        if cached is None or cached[0] != len(messages):
            index: dict[str, list[ChatMessage]] = {}
            for m in messages:
                if m.thread_id is not None:
                    index.setdefault(m.thread_id, []).append(m)
            cached = self._reply_index[channel_id] = (len(messages), index)
        return cached[1]

    def message_json(self, message: ChatMessage) -> dict[str, Any]:
        body: dict[str, Any] = {"type": "message", "user": message.sender_id, "text": message.text}
        if message.id in self.tombstones:
            body = {
                "type": "message",
                "subtype": "tombstone",
                "user": "USLACKBOT",
                "text": "This message was deleted.",
            }
        body["ts"] = ts_str(self.ts(message))
        if message.sender_id == self.world.bot_id:
            body["bot_id"] = BOT_ID
        if message.thread_id is not None:
            body["thread_ts"] = ts_str(self._ts[message.thread_id])
        replies = self._replies(message.channel_id).get(message.id)
        if replies:
            body["thread_ts"] = body["ts"]
            body["reply_count"] = len(replies)
            body["latest_reply"] = ts_str(max(self._ts[r.id] for r in replies))
        return body


def member_json(member: Member, team_id: str) -> dict[str, Any]:
    return {
        "id": member.id,
        "team_id": team_id,
        "name": member.name,
        "deleted": member.deactivated,
        "is_bot": member.is_bot,
        "real_name": member.display_name,
        "profile": {"display_name": member.display_name, "real_name": member.display_name},
        **(_zone_json(member.time_zone) if member.time_zone else {}),
    }


def _zone_json(zone: str, now: datetime | None = None) -> dict[str, Any]:
    """A user object's zone fields as Slack writes them: the IANA name (`tz`), a label and the offset from UTC in
    seconds at the moment of the call (`tz_offset`, -25200 for Los Angeles in summer, -28800 in winter)."""
    local = (now or datetime.now(UTC)).astimezone(ZoneInfo(zone))
    offset = local.utcoffset() or timedelta(0)
    return {"tz": zone, "tz_label": local.tzname() or zone, "tz_offset": int(offset.total_seconds())}


def channel_json(channel: Channel, viewer_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": channel.id,
        "name": channel.name,
        "is_channel": channel.kind == ChannelKind.PUBLIC,
        "is_group": channel.kind == ChannelKind.PRIVATE,
        "is_im": channel.kind == ChannelKind.DM,
        "is_mpim": channel.kind == ChannelKind.GROUP_DM,
        "is_private": channel.kind != ChannelKind.PUBLIC,
        "is_member": viewer_id in channel.member_ids,
    }
    if channel.kind == ChannelKind.DM:
        body["user"] = next((m for m in channel.member_ids if m != viewer_id), viewer_id)
    return body


def slack_world(world: World, *, bot_id: str = "UASKWITHBOT") -> World:
    """A copy of a world with Slack-shaped ids (members U…, channels C…/G…/D…) and a bot user in every channel."""
    member_ids = {m: "U" + m.upper().replace("-", "") for m in world.members}
    kinds = {ChannelKind.PUBLIC: "C", ChannelKind.PRIVATE: "G", ChannelKind.DM: "D", ChannelKind.GROUP_DM: "G"}
    channel_ids = {c.id: kinds[c.kind] + c.id.upper().replace("-", "") for c in world.channels.values()}
    out = World(id="T" + world.id.upper().replace("-", ""), name=world.name, bot_id=bot_id)
    out.add_member(Member(bot_id, "askwith", "askwith", is_bot=True), MemberPolicy(opted_in=False))
    for member in world.members.values():
        if member.id == world.bot_id:
            continue
        policy = world.policies.get(member.id, MemberPolicy())
        excluded = [channel_ids[c] for c in policy.excluded_channels]
        policy = dataclasses.replace(policy, excluded_channels=excluded)
        out.add_member(dataclasses.replace(member, id=member_ids[member.id]), policy)
    for channel in world.channels.values():
        members = tuple(member_ids[m] for m in channel.member_ids if m in member_ids)
        if channel.kind in (ChannelKind.PUBLIC, ChannelKind.PRIVATE):
            members += (bot_id,)  # the bot was invited to the team's channels
        out.add_channel(dataclasses.replace(channel, id=channel_ids[channel.id], member_ids=members))
    for messages in world.messages.values():
        for m in messages:
            out.messages[channel_ids[m.channel_id]].append(
                dataclasses.replace(
                    m, channel_id=channel_ids[m.channel_id], sender_id=member_ids[m.sender_id], thread_id=m.thread_id
                )
            )
    return out
