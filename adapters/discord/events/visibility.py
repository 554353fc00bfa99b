"""Events that change who can read what: members joining, leaving or changing roles; roles changing; channels and
their permission overwrites changing; private threads created or gaining and losing members. Each changes only what
it touches (see `adapters.discord.gateway_sync`); none reads history and none re-mirrors the server."""

from __future__ import annotations

from typing import Any

import discord


def register(client: discord.Client) -> None:
    def live(guild_id: int | None) -> Any:  # noqa: ANN401 - the server's GatewaySync, or None
        services = client.services_for(guild_id) if guild_id is not None else None  # type: ignore[attr-defined]
        return None if services is None else services.live

    @client.event
    async def on_member_roles(member: discord.Member, role_ids: list[str], joined: bool) -> None:
        """A member joined or their roles changed, with the roles as that event set them (`AskwithClient.dispatch`;
        @everyone among them: the model leaves it out)."""
        if (sync := live(member.guild.id)) is not None:
            await sync.member_roles(str(member.id), role_ids, joined=joined)

    @client.event
    async def on_raw_member_remove(payload: discord.RawMemberRemoveEvent) -> None:
        if (sync := live(payload.guild_id)) is not None:
            await sync.member_left(str(payload.user.id))

    for name in ("on_guild_role_create", "on_guild_role_update", "on_guild_role_delete"):
        client.event(_role_handler(live, name))

    @client.event
    async def on_guild_channel_create(channel: discord.abc.GuildChannel) -> None:
        if (sync := live(channel.guild.id)) is not None:
            await sync.channel_changed(str(channel.id))

    @client.event
    async def on_guild_channel_update(_before: discord.abc.GuildChannel, after: discord.abc.GuildChannel) -> None:
        if (sync := live(after.guild.id)) is not None:
            await sync.channel_changed(str(after.id))

    @client.event
    async def on_guild_channel_delete(channel: discord.abc.GuildChannel) -> None:
        if (sync := live(channel.guild.id)) is not None:
            await sync.channel_deleted(str(channel.id))

    @client.event
    async def on_raw_thread_delete(payload: discord.RawThreadDeleteEvent) -> None:
        if (sync := live(payload.guild_id)) is not None:
            await sync.channel_deleted(str(payload.thread_id))

    @client.event
    async def on_thread_create(thread: discord.Thread) -> None:
        if thread.is_private() and (sync := live(thread.guild.id)) is not None:
            await sync.thread_changed(str(thread.id))  # a public thread is read by its parent's readers

    @client.event
    async def on_thread_member_join(member: discord.ThreadMember) -> None:
        await _thread_members_changed(live(member.thread.guild.id), str(member.thread_id))  # a cached thread

    @client.event
    async def on_raw_thread_member_remove(payload: discord.RawThreadMembersUpdate) -> None:
        await _thread_members_changed(live(payload.guild_id), str(payload.thread_id))


def _role_handler(live: Any, name: str) -> Any:  # noqa: ANN401 - a discord.py event coroutine
    async def handler(*roles: discord.Role) -> None:
        role = roles[-1]  # update passes (before, after)
        if (sync := live(role.guild.id)) is not None:
            deleted = name == "on_guild_role_delete"
            await sync.role_changed(str(role.id), None if deleted else role.permissions.value)

    handler.__name__ = name  # discord.py registers an event by its coroutine's name
    return handler


async def _thread_members_changed(sync: Any, thread_id: str) -> None:  # noqa: ANN401 - GatewaySync or None
    if sync is not None:
        sync.port.threads.members_changed(thread_id)
        await sync.thread_changed(thread_id)
