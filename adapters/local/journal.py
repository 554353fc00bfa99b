"""The local workspace's write-ahead journal: every post is on disk before the port says it was made.

The world file is rewritten whole (too slow for every post), so each post is first appended as one JSON line to
`<world file>.journal` and flushed to disk (fsync). Loading the world replays the journal; saving the world file
(atomically) empties it. A process killed at any moment loses no post it reported, so an answer the database marks
as posted is in the workspace file.

    journal = Journal(Path("acme.json.journal"))
    journal.append(message)          # durable when it returns
    journal.replay(world)            # on load: messages after the last save
    journal.clear()                  # after the world file was saved

A line that cannot be replayed (not UTF-8, not a JSON object of the right shape, a bad time, an unknown channel or
sender, or a sender who cannot write in that channel) never stops the workspace from opening: it is skipped with a
warning naming its line number and kept aside, as written, in `<journal>.rejected`.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.platform.port import ChatMessage
from bot.store.world import World


logger = logging.getLogger(__name__)


class BadLineError(ValueError):
    """One journal line that cannot be replayed; the message says why."""


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rejected = path.with_name(path.name + ".rejected")

    @classmethod
    def beside(cls, world_file: Path) -> Journal:
        return cls(world_file.with_name(world_file.name + ".journal"))

    def append(self, message: ChatMessage) -> None:
        line = json.dumps(_line(message)) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(line)
            file.flush()
            os.fsync(file.fileno())

    def replay(self, world: World) -> int:
        """Add the journal's messages the world file does not have yet; returns how many. Bad lines are skipped
        with a warning and kept aside (a last line cut off by a crash mid-append was never reported as posted)."""
        if not self.path.is_file():
            return 0
        known = {m.id for messages in world.messages.values() for m in messages}
        added, kept, bad = 0, [], []
        for number, line in enumerate(self.path.read_bytes().splitlines(keepends=True), start=1):
            if not line.strip():
                continue
            try:
                raw = _entry(line, world)
            except BadLineError as why:
                logger.warning("Journal %s line %d skipped (kept in %s): %s", self.path, number, self.rejected, why)
                bad.append(line if line.endswith(b"\n") else line + b"\n")
                continue
            kept.append(line)
            if raw["id"] in known:
                continue
            world.add_message(
                raw["channel_id"], raw["sender_id"], raw["text"], ts=raw["ts"], thread_id=raw["thread_id"],
                message_id=raw["id"],
            )  # fmt: skip
            known.add(raw["id"])
            added += 1
        if bad:
            self._set_aside(bad, kept)
        return added

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    def _set_aside(self, bad: list[bytes], kept: list[bytes]) -> None:
        """Bad lines to `<journal>.rejected`, and out of the journal (so the next start does not warn again)."""
        with self.rejected.open("ab") as file:
            file.write(b"".join(bad))
            file.flush()
            os.fsync(file.fileno())
        fresh = self.path.with_name(self.path.name + ".tmp")
        fresh.write_bytes(b"".join(kept))
        os.replace(fresh, self.path)


def _line(message: ChatMessage) -> dict[str, Any]:
    return {
        "id": message.id, "channel_id": message.channel_id, "sender_id": message.sender_id,
        "ts": message.ts.astimezone(UTC).isoformat(), "text": message.text, "thread_id": message.thread_id,
    }  # fmt: skip


def _entry(line: bytes, world: World) -> dict[str, Any]:
    """One journal line as the post it records, or BadLineError saying what is wrong with it."""
    try:
        raw = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadLineError("not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise BadLineError(f"not JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise BadLineError(f"a JSON {type(raw).__name__}, not an object")
    for key in ("id", "channel_id", "sender_id", "ts", "text"):
        if not isinstance(raw.get(key), str):
            raise BadLineError(f"{key!r} missing or not text")
    if raw.get("thread_id") is not None and not isinstance(raw["thread_id"], str):
        raise BadLineError("'thread_id' is not text")
    channel = world.channels.get(raw["channel_id"])
    if channel is None:
        raise BadLineError(f"unknown channel {raw['channel_id']!r}")
    if raw["sender_id"] not in world.members:
        raise BadLineError(f"unknown sender {raw['sender_id']!r}")
    if raw["sender_id"] != world.bot_id and raw["sender_id"] not in channel.member_ids:
        raise BadLineError(f"{raw['sender_id']!r} cannot write in {raw['channel_id']!r}")
    return {**raw, "ts": _time(raw["ts"]), "thread_id": raw.get("thread_id")}


def _time(text: str) -> datetime:
    try:
        ts = datetime.fromisoformat(text)
    except ValueError:
        raise BadLineError(f"bad time {text[:40]!r}") from None
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)
