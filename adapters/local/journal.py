"""The local workspace's write-ahead journal: every post is on disk before the port says it was made.

The world file is rewritten whole (too slow for every post), so each post is first appended as one JSON line to
`<world file>.journal` and flushed to disk (fsync). Loading the world replays the journal; saving the world file
(atomically) empties it. A process killed at any moment loses no post it reported, so an answer the database marks
as posted is in the workspace file.

    journal = Journal(Path("acme.json.journal"))
    journal.append(message)          # durable when it returns
    journal.replay(world)            # on load: messages after the last save
    journal.clear()                  # after the world file was saved
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from bot.port import ChatMessage
from bot.world import World


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def beside(cls, world_file: Path) -> Journal:
        return cls(world_file.with_name(world_file.name + ".journal"))

    def append(self, message: ChatMessage) -> None:
        line = json.dumps({**asdict(message), "ts": message.ts.astimezone(UTC).isoformat()}) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(line)
            file.flush()
            os.fsync(file.fileno())

    def replay(self, world: World) -> int:
        """Add the journal's messages the world file does not have yet; returns how many. A last line cut off by a
        crash mid-append was never reported as posted, so it is skipped."""
        if not self.path.is_file():
            return 0
        known = {m.id for messages in world.messages.values() for m in messages}
        added = 0
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                raw = json.loads(line)
            except json.JSONDecodeError:
                continue
            if raw["id"] in known or raw["channel_id"] not in world.channels:
                continue
            ts = datetime.fromisoformat(raw["ts"])
            world.add_message(
                raw["channel_id"], raw["sender_id"], raw["text"], ts=ts, thread_id=raw.get("thread_id"),
                message_id=raw["id"],
            )  # fmt: skip
            known.add(raw["id"])
            added += 1
        return added

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
