"""`/ask-with question:<text> colleague:<@bob> [colleague2 …]`: answer Discord within 3 s, then let the core work.

The interaction is deferred first (Discord wants a response within 3 seconds; the member sees "thinking…"). The
core checks the request (database look-ups only) and queues it; a refusal is the follow-up, visible to the member
only. An accepted ask is run by the ask worker; its answer comes back as another ephemeral follow-up on this
interaction (or a DM if the interaction expired), while the agents talk in a private thread.
"""

from __future__ import annotations

import discord
from discord import app_commands

from adapters.discord import texts
from adapters.discord.command_text import parse_ask
from adapters.discord.port import NO_MENTIONS
from adapters.discord.services import services_of
from bot.asks.service import AskRequest
from bot.errors import AskRejectedError


Colleague = discord.User | None


@app_commands.command(name="ask-with", description=texts.ASK_DESCRIPTION)
@app_commands.guild_only()  # a global command: in a DM it could not tell which server's workspace is meant
@app_commands.describe(
    question=texts.QUESTION_DESCRIPTION,
    colleague=texts.COLLEAGUE_DESCRIPTION,
    colleague2=texts.COLLEAGUE_DESCRIPTION,
    colleague3=texts.COLLEAGUE_DESCRIPTION,
    colleague4=texts.COLLEAGUE_DESCRIPTION,
)
async def ask_with(
    interaction: discord.Interaction,
    question: str,
    colleague: Colleague = None,
    colleague2: Colleague = None,
    colleague3: Colleague = None,
    colleague4: Colleague = None,
) -> None:
    await interaction.response.defer(ephemeral=True, thinking=True)
    svc = services_of(interaction)
    picked = [user for user in (colleague, colleague2, colleague3, colleague4) if user is not None]
    parsed = parse_ask(question)
    request = AskRequest(  # people by id, as on every other path: a username may change (or be reused) meanwhile
        requester=str(interaction.user.id),
        colleagues=[str(user.id) for user in picked] + list(parsed.colleagues),
        question=parsed.question,
        origin_channel_id=svc.port.replies.route(interaction),
    )
    try:
        await svc.asks.submit(request)
    except AskRejectedError as exc:
        await interaction.followup.send(texts.by_name(str(exc), picked), ephemeral=True)
        return
    names = [user.display_name for user in picked] + [texts.mention(ref) for ref in parsed.colleagues]
    await interaction.followup.send(texts.asking(names), ephemeral=True, allowed_mentions=NO_MENTIONS)


def register(tree: app_commands.CommandTree[discord.Client]) -> None:
    tree.add_command(ask_with)
