"""Who is who in a workspace, as the agents need it: members' askwith status, policies, whom they talk with, and who
wrote the lines a requester holds from their DMs and private channels."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Select, bindparam, case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from bot.base.time_zones import member_zone
from bot.errors import UnknownMemberError
from bot.memory.types import Viewer
from bot.platform.port import ChannelKind, SharePolicy
from bot.store import models
from bot.store.db import Database


SESSION = "session:"  # a fuzzy-memory line id: "session:<key>"
_PRIVATE_KINDS = (ChannelKind.DM.value, ChannelKind.GROUP_DM.value, ChannelKind.PRIVATE.value)


@dataclass(frozen=True)
class Authorship:
    """Who wrote a line of a requester's DM or private channel (other than the requester), and who can read it."""

    authors: frozenset[str]  # handles of the people (never bots) whose words the line holds
    readers: frozenset[str]  # handles of the channel's members


@dataclass(frozen=True)
class MemberProfile:
    handle: str  # the member's name (mention handle)
    platform_id: str
    display_name: str
    viewer: Viewer
    share: SharePolicy
    opted_in: bool
    is_bot: bool
    deactivated: bool
    excluded: frozenset[str] = frozenset()  # names and platform ids of the channels kept out of their memory
    # Their agent's pending words may rest on lines of a channel excluded since it read them: nothing leaves now.
    withdrawn: bool = False
    time_zone: str | None = None  # the zone they read times in (chosen, else their profile's); None: the workspace's

    @property
    def can_take_part(self) -> bool:
        return self.opted_in and not self.is_bot and not self.deactivated and not self.withdrawn


class Roster:
    """Member look-ups for one workspace. `profile` reads the database at every call: a member's policy, memory
    switch and channels change in any process (the web settings page, another worker) and apply to the next look-up.
    `identity` is for what never changes (handle, platform id, display name, store id): it may be remembered."""

    def __init__(self, db: Database, workspace_id: int) -> None:
        self.db = db
        self.workspace_id = workspace_id
        self._identities: dict[str, MemberProfile] = {}

    async def identity(self, who: str) -> MemberProfile:
        """A member for their names and ids only: its policy fields may be stale (read them from `profile`)."""
        wanted = who.strip().lstrip("@")
        if wanted not in self._identities:
            profile = await self.profile(wanted)
            self._identities[wanted] = self._identities[profile.handle] = profile
        return self._identities[wanted]

    async def profile(self, who: str) -> MemberProfile:
        """A member by handle (with or without @) or platform id; UnknownMemberError if there is none."""
        wanted = who.strip().lstrip("@")
        params = {"workspace": self.workspace_id, "wanted": wanted, "lowered": wanted.lower()}
        async with self.db.engine.connect() as conn:  # one statement: the member with the channels they exclude
            rows = (await conn.execute(_PROFILE, params)).all()
        # An exact handle or id wins; otherwise a case-insensitive match counts only when it names one member.
        exact = [r for r in rows if wanted in (r.name, r.platform_id)]
        found = exact or (rows if len({r.id for r in rows}) == 1 else [])
        if not found:
            raise UnknownMemberError(who)
        return self._profile([r for r in rows if r.id == found[0].id])

    async def profiles(self, handles: Iterable[str]) -> dict[str, MemberProfile]:
        """`profile` of each of these handles (exact member names), read in one statement."""
        wanted = set(handles)
        if not wanted:
            return {}
        async with self.db.engine.connect() as conn:
            rows = (await conn.execute(_PROFILES, {"workspace": self.workspace_id, "names": list(wanted)})).all()
        by_member: dict[str, list[Row[Any]]] = {}
        for row in rows:
            by_member.setdefault(row.name, []).append(row)
        found = {name: self._profile(member_rows) for name, member_rows in by_member.items()}
        for missing in wanted - found.keys():  # not a member's exact name: looked up as `profile` does (or refused)
            found[missing] = await self.profile(missing)
        return found

    def _profile(self, rows: list[Row[Any]]) -> MemberProfile:
        """One member's profile from their rows of `_PROFILE` (one per channel they exclude, or one with none)."""
        row = rows[0]
        return MemberProfile(
            handle=row.name,
            platform_id=row.platform_id,
            display_name=row.display_name or row.name,
            viewer=Viewer(self.workspace_id, row.id, row.name),
            share=SharePolicy(row.share_policy),
            opted_in=row.opted_in,
            is_bot=row.is_bot,
            deactivated=row.deactivated,
            excluded=frozenset(name for r in rows for name in (r.excluded_name, r.excluded_id) if name),
            time_zone=member_zone(row.time_zone, row.platform_time_zone),
        )

    async def contacts(self, handle: str) -> list[str]:
        """Handles of the people a member talks with (shares a DM or channel with): DMs first, then the smallest
        channel shared (a team room says more about who works together than #general), not message volume."""
        me = await self.identity(handle)
        async with self.db.engine.connect() as conn:
            rows = (await conn.execute(_CONTACTS, {"member": me.viewer.member_id})).all()
        ranked = sorted(rows, key=lambda r: (-int(r[1] or 0), int(r[2] or 0), r[0]))
        return [r[0] for r in ranked]

    async def talks_with(self, a: str, b: str) -> bool:
        return (await self.identity(b)).handle in await self.contacts(a)

    async def private_authors(self, requester: str, line_ids: Iterable[str]) -> dict[str, Authorship]:
        """For each line id (a message id, or "session:<key>") that comes from a DM or private channel `requester`
        is in and holds someone else's words: who wrote them and who reads that channel. Other lines are left out."""
        me = await self.identity(requester)
        ids = set(line_ids)
        messages = [i for i in ids if not i.startswith(SESSION)]
        sessions = {i.removeprefix(SESSION): i for i in ids if i.startswith(SESSION)}
        if not messages and not sessions:
            return {}
        params = {"workspace": self.workspace_id, "member": me.viewer.member_id}
        found: dict[str, set[str]] = {}
        channels: dict[str, int] = {}
        async with self.db.engine.connect() as conn:
            if messages:
                for line_id, channel_id, author in await conn.execute(_MESSAGE_AUTHORS, {**params, "ids": messages}):
                    found.setdefault(line_id, set()).add(author)
                    channels[line_id] = channel_id
            if sessions:
                keys = list(sessions)
                for key, channel_id, author in await conn.execute(_SESSION_AUTHORS, {**params, "ids": keys}):
                    found.setdefault(sessions[key], set()).add(author)
                    channels[sessions[key]] = channel_id
            readers = await self._readers(conn, set(channels.values()))
        return {i: Authorship(frozenset(a), readers.get(channels[i], frozenset())) for i, a in found.items()}

    async def _readers(self, conn: AsyncConnection, channel_ids: set[int]) -> dict[int, frozenset[str]]:
        if not channel_ids:
            return {}
        readers: dict[int, set[str]] = {}
        for channel_id, name in (await conn.execute(_READERS, {"channels": list(channel_ids)})).all():
            readers.setdefault(channel_id, set()).add(name)
        return {c: frozenset(names) for c, names in readers.items()}


def _profile_statement() -> Select[Any]:
    """Members with the channels each keeps out of memory (one row per channel, or one with none)."""
    member, channel = models.Member, models.Channel
    return (
        select(
            member.id,
            member.name,
            member.platform_id,
            member.display_name,
            member.share_policy,
            member.opted_in,
            member.is_bot,
            member.deactivated,
            member.time_zone,
            member.platform_time_zone,
            channel.name.label("excluded_name"),
            channel.platform_id.label("excluded_id"),
        )
        .outerjoin(models.MemberExclusion, models.MemberExclusion.member_id == member.id)
        .outerjoin(channel, channel.id == models.MemberExclusion.channel_id)
        .where(member.workspace_id == bindparam("workspace"))
    )


# Built once (bind parameters carry the values): a profile is read at every turn and every send of every ask.
_PROFILE = _profile_statement().where(
    (models.Member.name == bindparam("wanted"))
    | (models.Member.platform_id == bindparam("wanted"))
    | (func.lower(models.Member.name) == bindparam("lowered"))  # `--as Alice` is alice
)
_PROFILES = _profile_statement().where(models.Member.name.in_(bindparam("names", expanding=True)))


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


_CONTACTS = _contacts_statement()
_MESSAGE_AUTHORS, _SESSION_AUTHORS = _authors_statements()
_READERS = (
    select(models.Membership.channel_id, models.Member.name)
    .join(models.Member, models.Member.id == models.Membership.member_id)
    .where(models.Membership.channel_id.in_(bindparam("channels", expanding=True)))
)
