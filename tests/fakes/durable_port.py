"""A local workspace whose bot posts go to an append-only file, so several processes share what was posted.

Each post is one JSON line, flushed and fsynced before `post` returns: a process killed right after posting has
still posted, exactly like a chat platform that received the request. `read_history` includes the file's posts, so
the final-post check can see posts made by a process that has died since.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path

from adapters.local.workspace import LocalWorkspace
from bot.platform.port import ChatMessage, HistoryPage
from bot.store.world import World


class AppendLogWorkspace(LocalWorkspace):
    def __init__(self, world: World, *, posts: Path) -> None:
        super().__init__(world)
        self.posts = posts

    async def post(self, channel_id: str, text: str, *, thread_id: str | None = None) -> str:
        message_id = f"p-{uuid.uuid4().hex[:12]}"
        line = {"id": message_id, "channel_id": channel_id, "thread_id": thread_id, "text": text, "pid": os.getpid()}
        with self.posts.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
            out.flush()
            os.fsync(out.fileno())
        return message_id

    async def read_history(self, channel_id: str, *, cursor: str | None = None, limit: int = 200) -> HistoryPage:
        posted = [m for m in read_posts(self.posts) if m.channel_id == channel_id and m.thread_id is None]
        return HistoryPage(posted, posted[-1].id if posted else "", False)


def read_posts(path: Path) -> list[ChatMessage]:
    if not path.exists():
        return []
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        out.append(
            ChatMessage(line["id"], line["channel_id"], "askwith", datetime.now(UTC), line["text"], line["thread_id"])
        )
    return out
