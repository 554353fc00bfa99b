"""The `/askwith show` panel: a member's own settings as controls, their recent asks, and what their agent shared
with whom (their own audit log), in one ephemeral message only they see.

Controls: a Memory on/off button, a share-policy select (auto / ask / never), and a channel select holding the
channels kept out of their agent's memory (pick to exclude, unpick to include). Each change goes through the same
core functions as the `/askwith on|off|share|exclude|include` commands, and the panel is redrawn from the stored
settings. DMs: Discord gives bots no way to read members' DMs, so there is nothing to connect; the panel says so.
"""

from __future__ import annotations

from typing import Any

import discord

from adapters.discord import texts
from adapters.discord.services import DiscordServices
from bot.asks.read_models.member_views import RecentAsk, SharedItem, recent_asks, shared_by
from bot.errors import UnknownChannelError
from bot.platform.port import SharePolicy
from bot.store.member_settings import MemberSettings
from bot.texts import chat_texts


RECENT_ASKS = 5
SHARED_ITEMS = 8
MAX_CHANNELS = 25  # a select holds at most 25 values
CHANNEL_TYPES = [
    discord.ChannelType.text, discord.ChannelType.voice, discord.ChannelType.news, discord.ChannelType.stage_voice,
    discord.ChannelType.forum, discord.ChannelType.media,
]  # fmt: skip


async def panel(svc: DiscordServices, member_id: str, note: str = "") -> dict[str, Any]:
    """The panel's message (`content`, `embeds`, `view`) for one member, from what is stored now."""
    settings = await svc.member_settings.get(svc.workspace, member_id)
    handle = (await svc.asks.roster.profile(member_id)).handle
    asks = await recent_asks(svc.db, svc.asks.workspace_id, handle, limit=RECENT_ASKS)
    shared = await shared_by(svc.db, svc.asks.workspace_id, handle, limit=SHARED_ITEMS)
    link = svc.asks.transcript_link
    embeds = [
        settings_embed(settings),
        asks_embed(asks, lambda ask_id: link(ask_id, handle) if link else None),
        shared_embed(shared),
    ]
    return {"content": note or None, "embeds": embeds, "view": SettingsPanel(svc, member_id, settings)}


def settings_embed(settings: MemberSettings) -> discord.Embed:
    embed = discord.Embed(title=chat_texts.SETTINGS_TITLE, description=texts.panel_settings(settings))
    embed.set_footer(text=texts.PANEL_DMS)
    return embed


def asks_embed(asks: list[RecentAsk], link: Any) -> discord.Embed:
    lines = [texts.panel_ask(a.ask_id, a.question, a.status, link(a.ask_id)) for a in asks]
    return discord.Embed(title=chat_texts.RECENT_ASKS_TITLE, description="\n".join(lines) or texts.PANEL_NO_ASKS)


def shared_embed(items: list[SharedItem]) -> discord.Embed:
    lines = [texts.panel_shared(i.requester, i.with_agent, i.question, i.text, i.at, i.approval) for i in items]
    return discord.Embed(
        title=chat_texts.SHARED_TITLE, description="\n".join(lines)[:4000] or texts.PANEL_NOTHING_SHARED
    )


class SettingsPanel(discord.ui.View):
    def __init__(self, svc: DiscordServices, member_id: str, settings: MemberSettings) -> None:
        super().__init__(timeout=900)
        self.svc = svc
        self.member_id = member_id
        self.settings = settings
        self.memory.label = texts.panel_memory_button(settings.opted_in)
        self.memory.style = discord.ButtonStyle.success if settings.opted_in else discord.ButtonStyle.secondary
        self.share.options = [
            discord.SelectOption(label=texts.share_label(p), value=p.value, default=p is settings.share)
            for p in SharePolicy
        ]
        self.excluded.default_values = [
            discord.SelectDefaultValue(id=int(c), type=discord.SelectDefaultValueType.channel)
            for c in settings.excluded_channels[:MAX_CHANNELS]
            if c.isdigit()
        ]

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return str(interaction.user.id) == self.member_id  # the panel is ephemeral: only its member sees it

    async def _redraw(self, interaction: discord.Interaction, note: str = "") -> None:
        """The panel as stored now. Every control acknowledges its click before it writes (`defer`: Discord wants
        an answer within 3 s, the database may be slower), so the redraw edits the deferred response."""
        await interaction.edit_original_response(**await panel(self.svc, self.member_id, note))

    @discord.ui.button(row=0)
    async def memory(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        await interaction.response.defer()
        on = not self.settings.opted_in
        await self.svc.set_memory(self.member_id, on)
        await self._redraw(interaction, "" if on else texts.panel_memory_off())

    @discord.ui.select(cls=discord.ui.Select, placeholder=texts.PANEL_SHARE_PLACEHOLDER, row=1)
    async def share(self, interaction: discord.Interaction, select: discord.ui.Select[Any]) -> None:
        await interaction.response.defer()
        policy = SharePolicy(select.values[0])
        await self.svc.member_settings.set_share_policy(self.svc.workspace, self.member_id, policy)
        await self._redraw(interaction)

    @discord.ui.select(
        cls=discord.ui.ChannelSelect, channel_types=CHANNEL_TYPES, min_values=0, max_values=MAX_CHANNELS,
        placeholder=texts.PANEL_EXCLUDE_PLACEHOLDER, row=2,
    )  # fmt: skip
    async def excluded(self, interaction: discord.Interaction, select: discord.ui.ChannelSelect[Any]) -> None:
        await interaction.response.defer()
        wanted = {str(channel.id) for channel in select.values}
        before = set(self.settings.excluded_channels)
        unknown: list[str] = []
        for channel_id, exclude in [*((c, True) for c in wanted - before), *((c, False) for c in before - wanted)]:
            try:
                await self.svc.member_settings.set_excluded(self.svc.workspace, self.member_id, channel_id, exclude)
            except UnknownChannelError as exc:
                unknown.append(exc.channel_id)
        await self._redraw(interaction, texts.channel_not_known(unknown[0]) if unknown else "")
