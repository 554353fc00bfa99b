"""One stored message as readers show it: its platform id, its channel's platform id and name, its sender's handle,
its time and its text. History reads and fuzzy memory's session reads select these same columns through the same
joins; they are written here once.

    stmt = with_channel_and_sender(select(*MESSAGE_VIEW).select_from(models.Message))
    rows = (await conn.execute(stmt)).all()    # [("m1", "C1", "general", "alice", ts, "hi"), ...]

A statement that starts from another table (a session, its links) joins its way to `message` first, then adds these.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Select

from bot.store import models


# (message id, channel id, channel name, sender handle, time, text), ids as the platform names them.
MessageViewRow = tuple[str, str, str, str, datetime, str]

MESSAGE_VIEW = (
    models.Message.platform_id,
    models.Channel.platform_id,
    models.Channel.name,
    models.Member.name,
    models.Message.ts,
    models.Message.text,
)


def with_channel_and_sender(stmt: Select[Any]) -> Select[Any]:
    """`stmt`, which reaches `message`, joined to the message's channel and sender (what `MESSAGE_VIEW` reads)."""
    return stmt.join(models.Channel, models.Channel.id == models.Message.channel_id).join(
        models.Member, models.Member.id == models.Message.sender_id
    )
