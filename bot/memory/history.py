"""Whole history: everything one viewer can see (or one channel/sender scope of it), read without searching.

    history = WholeHistory(db)
    size = await history.size(viewer)                 # HistorySize(messages=120, chars=9_800)
    views = await history.read(viewer)                # oldest first, fan-out copies once
    seen = await history.visible_ids(viewer, ["m1", "m7"])
    channels = await history.channels(viewer)         # {channel id: memory version}

When what a member can see fits an agent's evidence budget, the agent reads it whole (the paper's own setting for
Schedule and Needle in the Persona) instead of guessing keywords. Scoping is `visible_channels(viewer)`, as for every
memory read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.memory.types import MessageView, Viewer
from bot.memory.visibility import read_visible_channel_versions, visible_channels
from bot.store.db import Database, as_utc
from bot.store.history_reads import history_rows, history_size, visible_message_ids


@dataclass(frozen=True)
class HistorySize:
    messages: int
    chars: int
    more: bool = False  # there are more messages than the `limit` asked for (the figures count one past it)


class WholeHistory:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def size(
        self, viewer: Viewer, *, channel: str | None = None, sender: str | None = None, limit: int | None = None
    ) -> HistorySize:
        """How much is in scope; with `limit`, stop counting after that many messages (a large history is only
        ever asked whether it fits, so it is never scanned whole)."""
        visible = visible_channels(viewer)
        messages, chars = await history_size(
            self.db, viewer.workspace_id, visible, channel=channel, sender=sender, limit=limit
        )
        return HistorySize(messages, chars, limit is not None and messages > limit)

    async def read(
        self, viewer: Viewer, *, channel: str | None = None, sender: str | None = None
    ) -> list[MessageView]:
        """Every visible message in scope, oldest first; copies of one line (same sender, text, time) once."""
        rows = await history_rows(
            self.db, viewer.workspace_id, visible_channels(viewer), channel=channel, sender=sender
        )
        seen: set[tuple[str, str, str]] = set()
        views = []
        for message_id, channel_id, channel_name, sender_name, ts, text in rows:
            key = (sender_name, text, as_utc(ts).isoformat())
            if key not in seen:
                seen.add(key)
                views.append(MessageView(message_id, channel_id, channel_name, sender_name, as_utc(ts), text))
        return views

    async def channels(self, viewer: Viewer) -> dict[int, int]:
        """The channels the viewer can see now, each with its memory version (`visible_channel_versions`)."""
        return await read_visible_channel_versions(self.db, viewer)

    async def visible_ids(self, viewer: Viewer, message_ids: Sequence[str]) -> set[str]:
        """Which of these messages (platform ids) the viewer can see now."""
        if not message_ids:
            return set()
        return await visible_message_ids(self.db, viewer.workspace_id, visible_channels(viewer), message_ids)
