"""The people a member shares channels with: whom they talk with, and who else wrote the lines of their DMs and
private channels (with who reads those channels). Each read runs on a connection of its own.

    rows = await contact_rows(db, member_id)       # [(handle, in a DM with them: 1/0, smallest channel shared)]
    found = await private_line_authors(db, workspace_id, member_id, message_ids=["1712.5"], session_keys=["k1"])
    found.messages      # [("1712.5", channel id, author handle)]; found.readers: {channel id: member handles}

Neither bots nor the member themselves count as contacts or authors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Select, bindparam, case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from bot.platform.port import ChannelKind
from bot.store import models
from bot.store.db import Database


_PRIVATE_KINDS = (ChannelKind.DM.value, ChannelKind.GROUP_DM.value, ChannelKind.PRIVATE.value)


@dataclass(frozen=True)
class PrivateLineAuthors:
    """Who else wrote the private lines asked about, by line, and who reads the channels those lines are in."""

    messages: Sequence[Row[Any]]  # (message platform id, channel id, author handle)
    sessions: Sequence[Row[Any]]  # (memory session key, channel id, author handle)
    readers: dict[int, frozenset[str]]  # channel id -> handles of its members


def _contacts_statement() -> Select[Any]:
    """Who shares a DM or channel with the member `member`: (name, in a DM with them, smallest channel shared)."""
    mine, theirs, other = aliased(models.Membership), aliased(models.Membership), aliased(models.Member)
    sizes = (
        select(models.Membership.channel_id, func.count().label("size"))
        .group_by(models.Membership.channel_id)
        .subquery()
    )
    is_dm = models.Channel.kind.in_([ChannelKind.DM.value, ChannelKind.GROUP_DM.value])
    member = bindparam("member")
    return (
        select(other.name, func.max(case((is_dm, 1), else_=0)), func.min(sizes.c.size))
        .select_from(mine)
        .join(theirs, theirs.channel_id == mine.channel_id)
        .join(other, other.id == theirs.member_id)
        .join(models.Channel, models.Channel.id == mine.channel_id)
        .join(sizes, sizes.c.channel_id == mine.channel_id)
        .where(mine.member_id == member, other.id != member, other.is_bot.is_(False))
        .group_by(other.name)
    )


def _authors_statements() -> tuple[Select[Any], Select[Any]]:
    """(message platform id, channel, author) and (session key, channel, author) of the lines `ids` that come from a
    DM or private channel the member `member` is in and that someone else wrote, in workspace `workspace`."""
    mine = aliased(models.Membership)
    member = bindparam("member")
    scope = [
        models.Channel.workspace_id == bindparam("workspace"), models.Channel.kind.in_(_PRIVATE_KINDS),
        mine.member_id == member, models.Member.is_bot.is_(False), models.Member.id != member,
    ]  # fmt: skip
    messages = (
        select(models.Message.platform_id, models.Message.channel_id, models.Member.name)
        .join(models.Channel, models.Channel.id == models.Message.channel_id)
        .join(mine, mine.channel_id == models.Channel.id)
        .join(models.Member, models.Member.id == models.Message.sender_id)
        .where(
            models.Message.workspace_id == bindparam("workspace"),
            models.Message.platform_id.in_(bindparam("ids", expanding=True)),
        )
        .where(*scope)
    )
    sessions = (
        select(models.MemorySession.key, models.MemorySession.channel_id, models.Member.name)
        .join(models.Channel, models.Channel.id == models.MemorySession.channel_id)
        .join(mine, mine.channel_id == models.Channel.id)
        .join(models.SessionMessage, models.SessionMessage.session_id == models.MemorySession.id)
        .join(models.Message, models.Message.id == models.SessionMessage.message_id)
        .join(models.Member, models.Member.id == models.Message.sender_id)
        .where(models.MemorySession.key.in_(bindparam("ids", expanding=True)))
        .where(*scope)
    )
    return messages, sessions


# Built once (bind parameters carry the values), as the roster reads them often.
_CONTACTS = _contacts_statement()
_MESSAGE_AUTHORS, _SESSION_AUTHORS = _authors_statements()
_READERS = (
    select(models.Membership.channel_id, models.Member.name)
    .join(models.Member, models.Member.id == models.Membership.member_id)
    .where(models.Membership.channel_id.in_(bindparam("channels", expanding=True)))
)


async def contact_rows(db: Database, member_id: int) -> Sequence[Row[Any]]:
    """(handle, 1 if they share a DM with the member else 0, size of the smallest channel they share) of each person
    (never a bot) the member shares a DM or channel with, unordered."""
    async with db.read() as conn:
        return (await conn.execute(_CONTACTS, {"member": member_id})).all()


async def private_line_authors(
    db: Database, workspace_id: int, member_id: int, *, message_ids: Sequence[str], session_keys: Sequence[str]
) -> PrivateLineAuthors:
    """Of these messages (platform ids) and memory sessions (keys), those in a DM or private channel the member is
    in, with each author other than the member (never a bot), and the members of the channels they are in: all on
    one connection."""
    params = {"workspace": workspace_id, "member": member_id}
    messages: Sequence[Row[Any]] = ()
    sessions: Sequence[Row[Any]] = ()
    async with db.read() as conn:
        if message_ids:
            messages = (await conn.execute(_MESSAGE_AUTHORS, {**params, "ids": list(message_ids)})).all()
        if session_keys:
            sessions = (await conn.execute(_SESSION_AUTHORS, {**params, "ids": list(session_keys)})).all()
        # The channel each line is in (the last row's, should an id name lines in several): whose readers are read.
        message_channels = {line: channel for line, channel, _ in messages}
        session_channels = {key: channel for key, channel, _ in sessions}
        readers = await _readers(conn, {*message_channels.values(), *session_channels.values()})
    return PrivateLineAuthors(messages, sessions, readers)


async def _readers(conn: AsyncConnection, channel_ids: set[int]) -> dict[int, frozenset[str]]:
    if not channel_ids:
        return {}
    readers: dict[int, set[str]] = {}
    for channel_id, name in (await conn.execute(_READERS, {"channels": list(channel_ids)})).all():
        readers.setdefault(channel_id, set()).add(name)
    return {c: frozenset(names) for c, names in readers.items()}
