"""Events that change who can read what: members joining, leaving or changing roles; roles changing; channels and
their permission overwrites changing; threads created, archived, deleted or gaining and losing members. Each asks
for one recomputation of visibility (bursts coalesce, see `adapters.discord.gateway_sync`); none reads history."""

from __future__ import annotations

from typing import Any

import discord


VISIBILITY_EVENTS = (
    "on_member_join",
    "on_member_update",
    "on_guild_role_create",
    "on_guild_role_update",
    "on_guild_role_delete",
    "on_guild_channel_create",
    "on_guild_channel_update",
    "on_thread_create",
    "on_raw_thread_update",
    "on_thread_member_join",
    "on_raw_thread_member_remove",
)


THREAD_MEMBER_EVENTS = ("on_thread_member_join", "on_raw_thread_member_remove")


def register(client: discord.Client) -> None:
    for name in VISIBILITY_EVENTS:
        client.event(_changed(client, name))

    @client.event
    async def on_guild_channel_delete(channel: discord.abc.GuildChannel) -> None:
        if (svc := client.services_for(channel.guild.id)) is not None:  # type: ignore[attr-defined]
            await svc.live.channel_deleted(str(channel.id))

    @client.event
    async def on_raw_thread_delete(payload: discord.RawThreadDeleteEvent) -> None:
        if (svc := client.services_for(payload.guild_id)) is not None:  # type: ignore[attr-defined]
            await svc.live.channel_deleted(str(payload.thread_id))

    @client.event
    async def on_raw_member_remove(payload: discord.RawMemberRemoveEvent) -> None:
        if (svc := client.services_for(payload.guild_id)) is not None:  # type: ignore[attr-defined]
            await svc.live.member_left(str(payload.user.id))


def _changed(client: discord.Client, name: str) -> Any:
    async def handler(*args: Any) -> None:
        guild_id = guild_of(args[0]) if args else None
        if guild_id is not None and (svc := client.services_for(guild_id)) is not None:  # type: ignore[attr-defined]
            if name in THREAD_MEMBER_EVENTS:
                svc.port.threads.members_changed(str(args[0].thread_id))
            svc.live.visibility_changed(name.removeprefix("on_"))

    handler.__name__ = name  # discord.py registers an event by its coroutine's name
    return handler


def guild_of(subject: Any) -> int | None:
    """The server an event's first argument belongs to: a member, role, channel, thread, raw event or the guild."""
    if isinstance(subject, discord.Guild):
        return subject.id
    if (guild_id := getattr(subject, "guild_id", None)) is not None:
        return int(guild_id)
    if (guild := getattr(subject, "guild", None)) is not None:
        return int(guild.id)
    thread = getattr(subject, "thread", None)  # a ThreadMember
    return int(thread.guild.id) if thread is not None else None
