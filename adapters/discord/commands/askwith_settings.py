"""`/askwith show|on|off|share|exclude|include|timezone|forget`: a member's own askwith settings, answered only to
them; `show` opens the interactive panel (settings as controls, recent asks, what their agent shared).

Opting in lets askwith remember what the member can see; the share policy says whether their agent shares freely,
asks them first (Approve / Deny by DM) or declines; excluded channels never reach their agent's memory. Discord
gives no member's time zone, so deadlines are in the workspace's until the member picks theirs (`/askwith timezone`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import discord
from discord import app_commands

from adapters.discord import texts
from adapters.discord.services import DiscordServices, services_of
from adapters.discord.views.settings_panel import panel
from bot.errors import UnknownChannelError, UnknownMemberError, UnknownTimeZoneError
from bot.platform.port import SharePolicy
from bot.store.member_settings import MemberSettings
from bot.texts import settings_texts


Change = Callable[[DiscordServices, str], Awaitable[MemberSettings]]

# Global, so offered in servers only: a DM could not tell whose server's settings are meant.
askwith = app_commands.Group(name="askwith", description=texts.SETTINGS_DESCRIPTION, guild_only=True)


async def _reply(
    interaction: discord.Interaction, change: Change, render: Callable[[MemberSettings], str] | None = None
) -> None:
    """Apply one change for the member who typed the command and show their settings (only to them; `render` says
    what of them, all by default). Deferred first, like every command: the database work comes after Discord has its
    response (3 s), however busy the pool is."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    svc = services_of(interaction)
    member_id = str(interaction.user.id)
    try:
        try:
            settings = await change(svc, member_id)
        except UnknownMemberError:
            await svc.ingest.learn_member(member_id)  # joined since the last mirroring: looked up alone
            settings = await change(svc, member_id)
    except UnknownMemberError:
        text = texts.not_known_yet()
    except UnknownChannelError as exc:
        text = texts.channel_not_known(exc.channel_id)
    except UnknownTimeZoneError as exc:
        text = str(exc)
    else:
        text = (render or _summary)(settings)
    await interaction.followup.send(text, ephemeral=True)


def _summary(settings: MemberSettings) -> str:
    return texts.settings_summary(settings.opted_in, settings.share, settings.excluded_channels)


@askwith.command(name="show", description="Your settings (to change them), recent asks and what your agent shared")
async def show(interaction: discord.Interaction) -> None:
    """The interactive panel, only for the member (see `adapters.discord.views.settings_panel`)."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    svc = services_of(interaction)
    member_id = str(interaction.user.id)
    try:
        try:
            message = await panel(svc, member_id)
        except UnknownMemberError:
            await svc.ingest.learn_member(member_id)  # joined since the last mirroring: looked up alone
            message = await panel(svc, member_id)
    except UnknownMemberError:
        await interaction.followup.send(texts.not_known_yet(), ephemeral=True)
        return
    await interaction.followup.send(**{k: v for k, v in message.items() if v is not None}, ephemeral=True)


@askwith.command(name="on", description="Let askwith remember what you can see (opt in)")
async def opt_in(interaction: discord.Interaction) -> None:
    await _reply(interaction, lambda svc, member: svc.set_memory(member, True))


@askwith.command(name="off", description="Stop askwith remembering anything of yours (opt out)")
async def opt_out(interaction: discord.Interaction) -> None:
    await _reply(interaction, lambda svc, member: svc.set_memory(member, False))


@askwith.command(name="share", description="Whether your agent shares what it finds")
@app_commands.describe(policy="auto: share; ask: ask me first by DM; never: decline")
async def share(interaction: discord.Interaction, policy: SharePolicy) -> None:
    await _reply(interaction, lambda svc, member: svc.member_settings.set_share_policy(svc.workspace, member, policy))


@askwith.command(name="exclude", description="Keep a channel out of your agent's memory")
async def exclude(interaction: discord.Interaction, channel: app_commands.AppCommandChannel) -> None:
    channel_id = str(channel.id)
    await _reply(
        interaction, lambda svc, member: svc.member_settings.set_excluded(svc.workspace, member, channel_id, True)
    )


@askwith.command(name="include", description="Let a channel back into your agent's memory")
async def include(interaction: discord.Interaction, channel: app_commands.AppCommandChannel) -> None:
    channel_id = str(channel.id)
    await _reply(
        interaction, lambda svc, member: svc.member_settings.set_excluded(svc.workspace, member, channel_id, False)
    )


@askwith.command(name="timezone", description="The time zone your deadlines are shown in")
@app_commands.describe(zone="An IANA zone such as Europe/Paris; auto: the server's. Leave it out to see yours")
async def time_zone(interaction: discord.Interaction, zone: str | None = None) -> None:
    typed = (zone or "").strip()
    workspace_zone = services_of(interaction).settings.timezone
    await _reply(
        interaction,
        lambda svc, member: svc.member_settings.time_zone(svc.workspace, member, typed),
        lambda current: texts.time_zone_reply(current, workspace_zone, changed=bool(typed)),
    )


@askwith.command(name="forget", description="Turn memory off and delete your memory and your asks")
async def forget(interaction: discord.Interaction) -> None:
    """The member's memory goes (`bot.asks.forget.forget_member`): what only they could see, their asks, and where
    only opted-in authors are kept, every message they wrote."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    svc = services_of(interaction)
    workspace_id = svc.ingest.workspace_id or (await svc.ingest.mirror()).workspace_id
    bot_id = str(interaction.client.user.id) if interaction.client.user else ""
    member_id = str(interaction.user.id)
    deleted = await svc.ingest.live.forget_member(workspace_id, member_id, other_readers={bot_id})
    deleted["message_written"] = await svc.ingest.member_opted_out(member_id)
    await interaction.followup.send(settings_texts.forgot(deleted), ephemeral=True)


def register(tree: app_commands.CommandTree[discord.Client]) -> None:
    tree.add_command(askwith)
