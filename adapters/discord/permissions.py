"""Who can read a Discord channel: the guild's roles and the channel's permission overwrites, resolved the way
Discord resolves them (owner > administrator > @everyone overwrite > role overwrites > member overwrite).

Memory visibility needs both `view_channel` and `read_message_history`: a member who may view a channel but not
read its history sees only what arrives while they look, which is not what their agent may search.

    guild = GuildPermissions.from_payloads(guild_json, members_json)
    readers = guild.readers(channel_json)      # ids of the members who can read the channel's history
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from discord import Permissions


ROLE_OVERWRITE, MEMBER_OVERWRITE = 0, 1
ALL = Permissions.all().value


@dataclass(frozen=True)
class GuildPermissions:
    guild_id: str
    owner_id: str
    role_permissions: Mapping[str, int]  # role id -> permission bits (the @everyone role's id is the guild's)
    member_roles: Mapping[str, tuple[str, ...]]  # member id -> role ids
    role_names: Mapping[str, str] = field(default_factory=dict)  # lower-cased role name -> role id

    @classmethod
    def from_payloads(cls, guild: Mapping[str, Any], members: Iterable[Mapping[str, Any]]) -> GuildPermissions:
        return cls(
            guild_id=str(guild["id"]),
            owner_id=str(guild.get("owner_id") or ""),
            role_permissions={str(r["id"]): int(r.get("permissions") or 0) for r in guild.get("roles", [])},
            member_roles={str(m["user"]["id"]): tuple(str(r) for r in m.get("roles", [])) for m in members},
            role_names={str(r["name"]).lower(): str(r["id"]) for r in guild.get("roles", [])},
        )

    def base(self, member_id: str) -> int:
        """Guild-wide permissions: @everyone plus every role the member has; everything for owner and admins."""
        if member_id == self.owner_id:
            return ALL
        bits = self.role_permissions.get(self.guild_id, 0)
        for role_id in self.member_roles.get(member_id, ()):
            bits |= self.role_permissions.get(role_id, 0)
        return ALL if Permissions(bits).administrator else bits

    def in_channel(self, member_id: str, overwrites: Iterable[Mapping[str, Any]]) -> Permissions:
        bits = self.base(member_id)
        if bits == ALL:
            return Permissions(ALL)
        by_target = {(int(o["type"]), str(o["id"])): (int(o["allow"]), int(o["deny"])) for o in overwrites}
        bits = _apply(bits, *by_target.get((ROLE_OVERWRITE, self.guild_id), (0, 0)))
        allow = deny = 0
        for role_id in self.member_roles.get(member_id, ()):
            role_allow, role_deny = by_target.get((ROLE_OVERWRITE, role_id), (0, 0))
            allow, deny = allow | role_allow, deny | role_deny
        bits = _apply(bits, allow, deny)
        bits = _apply(bits, *by_target.get((MEMBER_OVERWRITE, member_id), (0, 0)))
        return Permissions(bits)

    def can_read(self, member_id: str, overwrites: Iterable[Mapping[str, Any]]) -> bool:
        permissions = self.in_channel(member_id, list(overwrites))
        return permissions.view_channel and permissions.read_message_history

    def readers(self, channel: Mapping[str, Any]) -> tuple[str, ...]:
        """Members who can read the channel's history. Members with the same roles and no overwrite of their own
        read alike, so each role set is worked out once (50,000 members hold a few hundred role sets)."""
        overwrites = list(channel.get("permission_overwrites", []))
        own = {str(o["id"]) for o in overwrites if int(o["type"]) == MEMBER_OVERWRITE} | {self.owner_id}
        by_roles: dict[tuple[str, ...], bool] = {}
        readers = []
        for member, roles in self.member_roles.items():
            if member in own:
                reads = self.can_read(member, overwrites)
            elif (reads := by_roles.get(roles)) is None:
                reads = by_roles[roles] = self.can_read(member, overwrites)
            if reads:
                readers.append(member)
        return tuple(readers)

    def private_thread_readers(self, parent: Mapping[str, Any], thread_members: set[str]) -> tuple[str, ...]:
        """A private thread: readers of its parent who are its members or moderate the parent's threads."""
        overwrites = list(parent.get("permission_overwrites", []))
        return tuple(
            m for m in self.readers(parent) if m in thread_members or self.in_channel(m, overwrites).manage_threads
        )

    def everyone_reads(self, channel: Mapping[str, Any]) -> bool:
        """Whether a member with no roles could read it (a public channel)."""
        overwrites = list(channel.get("permission_overwrites", []))
        bits = _apply(self.role_permissions.get(self.guild_id, 0), *_everyone(overwrites, self.guild_id))
        return Permissions(bits).view_channel and Permissions(bits).read_message_history

    def role_id(self, name_or_id: str) -> str | None:
        """A role's id from its id or its name (None when there is no such role)."""
        if name_or_id in self.role_permissions:
            return name_or_id
        return self.role_names.get(name_or_id.lstrip("@").lower())


def _everyone(overwrites: list[Mapping[str, Any]], guild_id: str) -> tuple[int, int]:
    for o in overwrites:
        if int(o["type"]) == ROLE_OVERWRITE and str(o["id"]) == guild_id:
            return int(o["allow"]), int(o["deny"])
    return 0, 0


def _apply(bits: int, allow: int, deny: int) -> int:
    return (bits & ~deny) | allow
