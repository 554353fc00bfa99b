"""Who is who in a workspace, as the agents need it: members' askwith status, policies, whom they talk with, and who
wrote the lines a requester holds from their DMs and private channels."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row

from bot.base.time_zones import member_zone
from bot.errors import UnknownMemberError
from bot.memory.types import Viewer
from bot.platform.port import SharePolicy
from bot.store.db import Database
from bot.store.member_contacts import contact_rows, private_line_authors
from bot.store.member_profiles import profile_rows, profile_rows_by_name


SESSION = "session:"  # a fuzzy-memory line id: "session:<key>"


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
        rows = await profile_rows(self.db, self.workspace_id, wanted)  # the member with the channels they exclude
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
        rows = await profile_rows_by_name(self.db, self.workspace_id, wanted)
        by_member: dict[str, list[Row[Any]]] = {}
        for row in rows:
            by_member.setdefault(row.name, []).append(row)
        found = {name: self._profile(member_rows) for name, member_rows in by_member.items()}
        for missing in wanted - found.keys():  # not a member's exact name: looked up as `profile` does (or refused)
            found[missing] = await self.profile(missing)
        return found

    def _profile(self, rows: list[Row[Any]]) -> MemberProfile:
        """One member's profile from their rows of `profile_rows` (one per channel they exclude, or one with none)."""
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
        rows = await contact_rows(self.db, me.viewer.member_id)
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
        lines = await private_line_authors(
            self.db, self.workspace_id, me.viewer.member_id, message_ids=messages, session_keys=list(sessions)
        )
        found: dict[str, set[str]] = {}
        channels: dict[str, int] = {}
        for line_id, channel_id, author in lines.messages:
            found.setdefault(line_id, set()).add(author)
            channels[line_id] = channel_id
        for key, channel_id, author in lines.sessions:
            found.setdefault(sessions[key], set()).add(author)
            channels[sessions[key]] = channel_id
        return {i: Authorship(frozenset(a), lines.readers.get(channels[i], frozenset())) for i, a in found.items()}
