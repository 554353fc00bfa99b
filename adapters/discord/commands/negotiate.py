"""`/negotiate colleague:<@bob>`: defer within Discord's 3 s, then let the core's member negotiation run.

The colleague is picked like `/ask-with`'s (a user option). The core checks the request (database look-ups only:
both members known, Bob is a person other than you, both have a negotiation profile); a refusal is the follow-up,
visible to the member only. Otherwise both members get the agreed trade by DM with Accept / Decline, and the
outcome. The negotiation runs in this interaction's own task (discord.py gives every command one), so waiting
for the two answers holds nothing else up.
"""

from __future__ import annotations

import discord
from discord import app_commands

from adapters.discord import texts
from adapters.discord.port import NO_MENTIONS
from adapters.discord.services import services_of
from bot.errors import NegotiationRejectedError


@app_commands.command(name="negotiate", description=texts.NEGOTIATE_DESCRIPTION)
@app_commands.guild_only()
@app_commands.describe(colleague=texts.NEGOTIATE_COLLEAGUE_DESCRIPTION)
async def negotiate(interaction: discord.Interaction, colleague: discord.User) -> None:
    await interaction.response.defer(ephemeral=True, thinking=True)
    negotiation = services_of(interaction).negotiation()
    try:
        initiator, counterpart = await negotiation.check(str(interaction.user.id), str(colleague.id))
    except NegotiationRejectedError as exc:
        await interaction.followup.send(texts.by_name(str(exc), [colleague]), ephemeral=True)
        return
    await interaction.followup.send(
        texts.negotiating(colleague.display_name), ephemeral=True, allowed_mentions=NO_MENTIONS
    )
    await negotiation.negotiate(initiator, counterpart)


def register(tree: app_commands.CommandTree[discord.Client]) -> None:
    tree.add_command(negotiate)
