"""A platform-neutral model of a chat workspace: members, channels, DMs and messages.

It backs the local simulated workspace (`adapters.local`), the benchmark replays and the test fakes of Slack and
Discord. Saved as one JSON file; loading a saved file gives back an equal world.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from bot.errors import UnknownChannelError, UnknownMemberError, WorkspaceError
from bot.platform.port import Channel, ChannelKind, ChatMessage, Member, SharePolicy
from bot.store.sanitize import db_text


FORMAT_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("world.schema.json")  # the documented format of a world file


@dataclass
class MemberPolicy:
    """A member's initial askwith settings as a world file states them (the database holds the live ones)."""

    opted_in: bool = True
    share: SharePolicy = SharePolicy.AUTO
    excluded_channels: list[str] = field(default_factory=list)


@dataclass
class World:
    id: str
    name: str
    members: dict[str, Member] = field(default_factory=dict)
    channels: dict[str, Channel] = field(default_factory=dict)
    messages: dict[str, list[ChatMessage]] = field(default_factory=dict)  # channel id -> messages, oldest first
    policies: dict[str, MemberPolicy] = field(default_factory=dict)
    bot_id: str = "askwith"
    admins: list[str] = field(default_factory=list)  # member handles who administer it (as ASKWITH_WEB_ADMINS)
    # The message ids in use, with the message count they were read at (see `_new_message_id`).
    _ids_seen: tuple[int, set[str]] | None = field(default=None, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ building
    def add_member(self, member: Member, policy: MemberPolicy | None = None) -> Member:
        if member.id in self.members:
            raise WorkspaceError(f"Member id {member.id!r} is already in the workspace.")
        if any(m.name == member.name for m in self.members.values()):
            raise WorkspaceError(f"Member name {member.name!r} is already taken.")
        self.members[member.id] = member
        self.policies[member.id] = policy or MemberPolicy(opted_in=not member.is_bot)
        return member

    def add_channel(self, channel: Channel) -> Channel:
        if channel.id in self.channels:
            raise WorkspaceError(f"Channel id {channel.id!r} is already in the workspace.")
        unknown = [m for m in channel.member_ids if m not in self.members]
        if unknown:
            raise UnknownMemberError(unknown[0])
        self.channels[channel.id] = channel
        self.messages.setdefault(channel.id, [])
        return channel

    def dm(self, a: str, b: str) -> Channel:
        """The DM channel between two members, created on first use (ids are order-independent)."""
        first, second = sorted((a, b))
        channel_id = f"D-{first}-{second}"
        if channel_id not in self.channels:
            self.add_channel(Channel(channel_id, f"{first}-{second}", ChannelKind.DM, (first, second)))
        return self.channels[channel_id]

    def add_message(
        self,
        channel_id: str,
        sender_id: str,
        text: str,
        *,
        ts: datetime | None = None,
        thread_id: str | None = None,
        message_id: str | None = None,
    ) -> ChatMessage:
        if channel_id not in self.channels:
            raise UnknownChannelError(channel_id)
        if sender_id not in self.members:
            raise UnknownMemberError(sender_id)
        message = ChatMessage(
            id=message_id or self._new_message_id(),
            channel_id=channel_id,
            sender_id=sender_id,
            ts=ts or datetime.now(UTC),
            text=db_text(text),  # a NUL or lone surrogate would make the message unstorable downstream
            thread_id=thread_id,
        )
        self.messages[channel_id].append(message)
        if self._ids_seen is not None:  # kept in step; lists changed some other way stay told apart by the count
            count, ids = self._ids_seen
            ids.add(message.id)
            self._ids_seen = (count + 1, ids)
        return message

    def _new_message_id(self) -> str:
        """`m<count + 1>`, or the next number after it that no message holds: a loaded file may already use it."""
        count = self.message_count()
        if self._ids_seen is None or self._ids_seen[0] != count:  # messages were added around `add_message`
            self._ids_seen = (count, {m.id for msgs in self.messages.values() for m in msgs})
        number = count + 1
        while (candidate := f"m{number:07d}") in self._ids_seen[1]:
            number += 1
        return candidate

    # ------------------------------------------------------------------ reading
    def member_by_name(self, name: str) -> Member:
        wanted = name.lstrip("@").lower()
        for member in self.members.values():
            if member.name.lower() == wanted or member.id == name:
                return member
        raise UnknownMemberError(name)

    def message_count(self) -> int:
        return sum(len(msgs) for msgs in self.messages.values())

    def visible_channels(self, member_id: str) -> list[Channel]:
        """Channels a member belongs to (public ones included only when joined), as memory scoping defines it."""
        return [c for c in self.channels.values() if member_id in c.member_ids]

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "id": self.id,
            "name": self.name,
            "bot_id": self.bot_id,
            **({"admins": list(self.admins)} if self.admins else {}),
            "members": [
                {**_member_fields(m), "policy": _policy_dict(self.policies.get(m.id, MemberPolicy()))}
                for m in self.members.values()
            ],
            "channels": [{**asdict(c), "member_ids": list(c.member_ids)} for c in self.channels.values()],
            "messages": [  # a world holds each message as it reads now: when it was last edited is not kept
                {**_message_fields(m), "ts": m.ts.astimezone(UTC).isoformat()}
                for msgs in self.messages.values()
                for m in msgs
            ],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> World:
        if data.get("format") != FORMAT_VERSION:
            raise WorkspaceError(
                f"Unsupported workspace file format {data.get('format')!r} (expected {FORMAT_VERSION})."
            )
        world = cls(id=data["id"], name=data["name"], bot_id=data.get("bot_id", "askwith"))
        for raw in data["members"]:
            raw = dict(raw)
            policy = raw.pop("policy", {})
            world.add_member(
                Member(**raw),
                MemberPolicy(
                    opted_in=policy.get("opted_in", True),
                    share=SharePolicy(policy.get("share", "auto")),
                    excluded_channels=list(policy.get("excluded_channels", [])),
                ),
            )
        for raw in data["channels"]:
            world.add_channel(Channel(raw["id"], raw["name"], ChannelKind(raw["kind"]), tuple(raw["member_ids"])))
        for raw in data["messages"]:
            ts = datetime.fromisoformat(raw["ts"])
            world.messages[raw["channel_id"]].append(
                ChatMessage(
                    id=raw["id"],
                    channel_id=raw["channel_id"],
                    sender_id=raw["sender_id"],
                    ts=ts if ts.tzinfo else ts.replace(tzinfo=UTC),
                    text=db_text(raw["text"]),
                    thread_id=raw.get("thread_id"),
                    reply_count=raw.get("reply_count", 0),
                )
            )
        world.admins = [world.member_by_name(handle).name for handle in data.get("admins", [])]
        return world

    @classmethod
    def load(cls, path: Path | str) -> World:
        """A world file, checked against the format's JSON Schema (`bot/store/world.schema.json`) first, so a mistake
        is reported as where it is and what is expected, never as a Python error."""
        path = Path(path)
        if not path.is_file():
            raise WorkspaceError(f"Workspace file {path} does not exist.")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise WorkspaceError(f"Workspace file {path} is not valid JSON: {exc.msg} (line {exc.lineno}).") from exc
        if isinstance(data, dict) and data.get("format") != FORMAT_VERSION:  # another version: say so, not its shape
            raise WorkspaceError(
                f"Workspace file {path}: Unsupported workspace file format {data.get('format')!r} "
                f"(expected {FORMAT_VERSION})."
            )
        if problem := schema_problem(data):
            raise WorkspaceError(f"Workspace file {path} is not valid: {problem} (format: bot/{SCHEMA_FILE.name}).")
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:  # consistent in shape, not in content (a dangling id)
            raise WorkspaceError(f"Workspace file {path} is not valid: {exc}") from exc

    def save(self, path: Path | str) -> None:
        """Write atomically (a crash mid-write never leaves half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(
            json.dumps(self.to_dict(), ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        tmp.replace(path)


def schema_problem(data: Any) -> str | None:
    """The first place where `data` breaks the workspace format, in words ("members[0]: unexpected field 'title'"),
    or None when it follows it."""
    error = best_match(_validator().iter_errors(data))
    if error is None:
        return None
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    if error.validator == "additionalProperties":
        allowed = ", ".join(sorted(error.schema.get("properties", {})))
        extra = ", ".join(repr(k) for k in error.instance if k not in error.schema.get("properties", {}))
        message = f"unexpected field {extra} (allowed: {allowed})"
    elif error.validator == "required":
        message = error.message.replace("is a required property", "is missing")
    else:
        message = error.message
    return f"{where or 'the file'}: {message}"


@functools.cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def _member_fields(member: Member) -> dict[str, Any]:
    fields = asdict(member)
    if fields.get("time_zone") is None:  # most members have none: files written before the field read the same
        fields.pop("time_zone", None)
    return fields


def _policy_dict(policy: MemberPolicy) -> dict[str, Any]:
    return {
        "opted_in": policy.opted_in,
        "share": str(policy.share),
        "excluded_channels": list(policy.excluded_channels),
    }


def _message_fields(message: ChatMessage) -> dict[str, Any]:
    fields = asdict(message)
    fields.pop("edited_at", None)
    return fields
