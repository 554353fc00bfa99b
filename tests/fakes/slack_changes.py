"""Changes people make on the fake Slack, each applied to its world and returned as the event Slack would deliver.

    changes = SlackChanges(fake_slack)
    event = changes.post("CCGENERAL", "UBOB", "hello")          # {"type": "message", ...}
    event = changes.edit("CCGENERAL", event["ts"], "hello!")    # message_changed
    events = changes.leave("GCLAUNCH", world.bot_id)            # member_left_channel + group_left

Shapes follow the Events API reference: `message_changed` carries the new `message` and the `previous_message`,
`message_deleted` the `deleted_ts`; a deleted thread parent with replies stays as a `tombstone`; a conversion to
private is a `channel_convert_to_private` message; deactivation is a `user_change` with `deleted: true`.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from typing import Any

from bot.platform.port import Channel, ChannelKind
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_shapes import SlackTimeline, member_json, ts_str


_ids = itertools.count(1)


class SlackChanges:
    def __init__(self, api: FakeSlackApi) -> None:
        self.api = api
        self.world = api.world

    @property
    def timeline(self) -> SlackTimeline:
        return self.api.timeline  # a test may give the fake a new timeline

    def _now_ts(self) -> str:
        return ts_str(int(time.time() * 1_000_000))

    # ------------------------------------------------------------------ messages
    def post(
        self, channel: str, user: str, text: str, *, thread_ts: str | None = None, broadcast: bool = False
    ) -> dict:
        ts = self.timeline.add(channel, user, text, thread_ts, message_id=f"s{next(_ids):08d}")
        event = {**self.timeline.message_json(self.timeline.find(channel, ts)), "channel": channel}
        event["channel_type"] = _channel_type(self.world.channels[channel].kind)
        if broadcast and thread_ts:
            event["subtype"] = "thread_broadcast"
        event.pop("reply_count", None)
        return event

    def edit(self, channel: str, ts: str, text: str) -> dict:
        before = self.timeline.message_json(self.timeline.find(channel, ts))
        self.timeline.replace_text(channel, ts, text)
        after = {**self.timeline.message_json(self.timeline.find(channel, ts)), "edited": {"ts": self._now_ts()}}
        return self._hidden("message_changed", channel, message=after, previous_message=before, ts=self._now_ts())

    def delete(self, channel: str, ts: str) -> dict:
        message = self.timeline.find(channel, ts)
        before = self.timeline.message_json(message)
        if any(m.thread_id == message.id for m in self.world.messages[channel]):
            self.timeline.tombstones.add(message.id)  # a parent with replies: Slack keeps a tombstone, replies stay
        else:
            self.timeline.remove(channel, ts)
        return self._hidden("message_deleted", channel, deleted_ts=ts, previous_message=before, ts=self._now_ts())

    def _hidden(self, subtype: str, channel: str, **fields: Any) -> dict:
        """Like every `message.*` event, an edit or deletion says what kind of conversation it happened in."""
        kind = self.world.channels[channel].kind
        return {**_hidden(subtype, channel, **fields), "channel_type": _channel_type(kind)}

    # ------------------------------------------------------------------ membership
    def join(self, channel: str, user: str) -> list[dict]:
        self._set_members(channel, (*self.world.channels[channel].member_ids, user))
        kind = self.world.channels[channel].kind
        return [{"type": "member_joined_channel", "user": user, "channel": channel, "channel_type": _code(kind)}]

    def leave(self, channel: str, user: str) -> list[dict]:
        kind = self.world.channels[channel].kind
        self._set_members(channel, tuple(m for m in self.world.channels[channel].member_ids if m != user))
        events = [{"type": "member_left_channel", "user": user, "channel": channel, "channel_type": _code(kind)}]
        if user == self.world.bot_id:
            events.append({"type": "group_left" if kind != ChannelKind.PUBLIC else "channel_left", "channel": channel})
        return events

    def _set_members(self, channel: str, members: tuple[str, ...]) -> None:
        old = self.world.channels[channel]
        self.world.channels[channel] = dataclasses.replace(old, member_ids=tuple(dict.fromkeys(members)))

    # ------------------------------------------------------------------ channels
    def create_channel(self, channel_id: str, name: str, kind: ChannelKind, members: tuple[str, ...]) -> list[dict]:
        self.world.add_channel(Channel(channel_id, name, kind, ()))
        return [event for member in members for event in self.join(channel_id, member)]

    def archive(self, channel: str, archived: bool = True) -> dict:
        kind = self.world.channels[channel].kind
        (self.api.archived.add if archived else self.api.archived.discard)(channel)
        prefix = "group" if kind != ChannelKind.PUBLIC else "channel"
        return {"type": f"{prefix}_{'archive' if archived else 'unarchive'}", "channel": channel, "user": "UALICE"}

    def delete_channel(self, channel: str) -> dict:
        kind = self.world.channels.pop(channel).kind
        self.world.messages.pop(channel, None)
        return {"type": "group_deleted" if kind != ChannelKind.PUBLIC else "channel_deleted", "channel": channel}

    def convert(self, channel: str, kind: ChannelKind) -> dict:
        self.world.channels[channel] = dataclasses.replace(self.world.channels[channel], kind=kind)
        subtype = "channel_convert_to_private" if kind == ChannelKind.PRIVATE else "channel_convert_to_public"
        return {"type": "message", "subtype": subtype, "channel": channel, "user": "UALICE", "ts": self._now_ts()}

    # ------------------------------------------------------------------ members and the app
    def deactivate(self, user: str) -> dict:
        member = dataclasses.replace(self.world.members[user], deactivated=True)
        self.world.members[user] = member
        for channel in list(self.world.channels.values()):
            if user in channel.member_ids and channel.kind not in (ChannelKind.DM, ChannelKind.GROUP_DM):
                self._set_members(channel.id, tuple(m for m in channel.member_ids if m != user))
        return {"type": "user_change", "user": member_json(member, self.world.id)}

    def revoke_tokens(self, *users: str) -> dict:
        for user in users:
            self.api.revoke_user_token(user)
        return {"type": "tokens_revoked", "tokens": {"oauth": list(users), "bot": []}}


def visible_messages(api: FakeSlackApi, member: str) -> set[str]:
    """What a member can read on the fake Slack now, among the conversations the bot is in: texts of messages
    people said (not the bot's posts, not deleted ones)."""
    world = api.world
    if world.members[member].deactivated:
        return set()
    return {
        m.text
        for channel in world.channels.values()
        if member in channel.member_ids and world.bot_id in channel.member_ids
        for m in world.messages.get(channel.id, [])
        if m.sender_id != world.bot_id and m.id not in api.timeline.tombstones
    }


def _hidden(subtype: str, channel: str, **fields: Any) -> dict:
    return {"type": "message", "subtype": subtype, "hidden": True, "channel": channel, **fields}


def _code(kind: ChannelKind) -> str:
    return {ChannelKind.PUBLIC: "C", ChannelKind.PRIVATE: "G", ChannelKind.DM: "D", ChannelKind.GROUP_DM: "G"}[kind]


def _channel_type(kind: ChannelKind) -> str:
    return {ChannelKind.PUBLIC: "channel", ChannelKind.PRIVATE: "group", ChannelKind.DM: "im"}.get(kind, "mpim")
