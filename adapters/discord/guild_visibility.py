"""Who reads what in one Discord server, kept between mirrors so a gateway event changes only what it touches.

A full recomputation checks every member against every channel: 50,000 members x 500 channels took about four
minutes of Python per event. An event touches far less: a member's roles change what that member reads; a role's
permissions change what its holders read; a channel's overwrites change who reads that channel. This model holds
the server as the last mirror read it (roles, each member's roles, the channels and their overwrites, the private
threads and their members), applies an event to itself and answers for the members it touched. Members with the same
roles and no overwrite of their own read the same channels, so they are worked out once per role set.

Its methods are CPU work: callers run them off the event loop (`asyncio.to_thread`), one at a time.

    model = GuildVisibility(permissions, channels, private_threads)
    model.set_roles(member_id, role_ids)
    readable = model.readable({member_id})       # member id -> ids of the channels and private threads they read
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from adapters.discord.permissions import MEMBER_OVERWRITE, GuildPermissions


@dataclass(frozen=True)
class PrivateThread:
    parent_id: str
    member_ids: frozenset[str]


class GuildVisibility:
    def __init__(
        self,
        permissions: GuildPermissions,
        channels: Mapping[str, Mapping[str, Any]],  # readable top-level channel id -> payload (with overwrites)
        private_threads: Mapping[str, PrivateThread],
    ) -> None:
        # Own copies: events change them, the mirror that built them keeps its own.
        self.role_permissions = dict(permissions.role_permissions)
        self.member_roles = dict(permissions.member_roles)
        self.guild_id, self.owner_id = permissions.guild_id, permissions.owner_id
        self.channels = {c: dict(p) for c, p in channels.items()}
        self.private_threads = dict(private_threads)
        self.lock = asyncio.Lock()  # held around each change and the computation that follows it

    # ------------------------------------------------------------------ events
    def set_roles(self, member_id: str, role_ids: Iterable[str] | None) -> None:
        """A member joined or their roles changed (None: they left)."""
        if role_ids is None:
            self.member_roles.pop(member_id, None)
        else:
            self.member_roles[member_id] = tuple(sorted(str(r) for r in role_ids if str(r) != self.guild_id))

    def set_role(self, role_id: str, permissions: int | None) -> set[str]:
        """A role created, changed (its permission bits) or deleted (None); returns the members it may change."""
        holders = self.holders(role_id)
        if permissions is None:
            self.role_permissions.pop(role_id, None)
            for member, roles in self.member_roles.items():
                if role_id in roles:
                    self.member_roles[member] = tuple(r for r in roles if r != role_id)
        else:
            self.role_permissions[role_id] = permissions
        return holders

    def holders(self, role_id: str) -> set[str]:
        if role_id == self.guild_id:
            return set(self.member_roles)
        return {m for m, roles in self.member_roles.items() if role_id in roles}

    def set_channel(self, channel_id: str, payload: Mapping[str, Any] | None) -> None:
        """A channel created or its overwrites changed (None: deleted, or the bot can no longer read it)."""
        if payload is None:
            self.channels.pop(channel_id, None)
        else:
            self.channels[channel_id] = dict(payload)

    def set_private_thread(self, thread_id: str, thread: PrivateThread | None) -> None:
        if thread is None:
            self.private_threads.pop(thread_id, None)
        else:
            self.private_threads[thread_id] = thread

    # ------------------------------------------------------------------ answers
    def readable(self, member_ids: Iterable[str]) -> dict[str, set[str]]:
        """Each member's readable channels and private threads (a member not in the server reads nothing)."""
        guild = self.permissions()
        own_overwrites = self._members_with_overwrites()
        by_roles: dict[tuple[str, ...], tuple[set[str], set[str]]] = {}
        out: dict[str, set[str]] = {}
        for member in member_ids:
            roles = self.member_roles.get(member)
            if roles is None:
                out[member] = set()
                continue
            if member == self.owner_id or member in own_overwrites:
                reads, moderates = self._channels_of(guild, member)
            else:
                if roles not in by_roles:
                    by_roles[roles] = self._channels_of(guild, member)
                reads, moderates = by_roles[roles]
            out[member] = reads | self._threads_of(member, reads, moderates)
        return out

    def readers(self, channel_id: str) -> set[str]:
        """Who reads one channel or private thread now."""
        thread = self.private_threads.get(channel_id)
        parent = self.channels.get(thread.parent_id if thread else channel_id)
        if parent is None:
            return set()
        guild = self.permissions()
        if thread is None:
            return set(guild.readers(parent))
        return set(guild.private_thread_readers(parent, set(thread.member_ids)))

    def _channels_of(self, guild: GuildPermissions, member: str) -> tuple[set[str], set[str]]:
        """(channels the member reads, those of them whose threads they moderate)."""
        reads, moderates = set(), set()
        for channel_id, payload in self.channels.items():
            overwrites = payload.get("permission_overwrites", [])
            bits = guild.in_channel(member, overwrites)
            if bits.view_channel and bits.read_message_history:
                reads.add(channel_id)
                if bits.manage_threads:
                    moderates.add(channel_id)
        return reads, moderates

    def _threads_of(self, member: str, reads: set[str], moderates: set[str]) -> set[str]:
        return {
            thread_id
            for thread_id, thread in self.private_threads.items()
            if thread.parent_id in reads and (member in thread.member_ids or thread.parent_id in moderates)
        }

    def _members_with_overwrites(self) -> set[str]:
        return {
            str(o["id"])
            for payload in self.channels.values()
            for o in payload.get("permission_overwrites", [])
            if int(o["type"]) == MEMBER_OVERWRITE
        }

    def permissions(self) -> GuildPermissions:
        return GuildPermissions(
            guild_id=self.guild_id,
            owner_id=self.owner_id,
            role_permissions=self.role_permissions,
            member_roles=self.member_roles,
        )
