"""The buttons of an ask in chat: Cancel on its status message; Transcript, 👍 and 👎 on its answer.

Cancel and the votes are dynamic items: the ask id lives in the custom id, so a click is understood by any running
bot process, after a restart too. Only the member who asked (or an admin) may cancel: the core decides and says
why not, which the clicker alone reads. A vote is recorded with the ask, one per member (voting again changes it).
"""

from __future__ import annotations

from typing import Any

import discord

from adapters.discord import texts
from bot.asks.control import CancelResult
from bot.asks.service import AskService
from bot.errors import AskError, WorkspaceError
from bot.texts import chat_texts, follow_up_texts, progress_texts


class CancelButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"askwith:cancel:(?P<ask_id>\d{1,18})"):
    def __init__(self, ask_id: int) -> None:
        button = discord.ui.Button(
            label=chat_texts.CANCEL_BUTTON, style=discord.ButtonStyle.secondary, custom_id=f"askwith:cancel:{ask_id}"
        )
        super().__init__(button)
        self.ask_id = ask_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button[Any], match: Any, /
    ) -> CancelButton:
        return cls(int(match["ask_id"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        # Answered at once (Discord wants 3 s; stopping an ask here waits for its final post, which replaces the
        # status message and its button); a refusal goes to the clicker alone.
        await interaction.response.defer()
        asks = _asks(interaction)
        try:
            result = await asks.cancel(self.ask_id, by=str(interaction.user.id))
        except AskError as exc:  # not theirs (the core says who may)
            await interaction.followup.send(str(exc), ephemeral=True)
            return
        if result is CancelResult.FINISHED:
            status = (await asks.load(self.ask_id)).status
            await interaction.followup.send(progress_texts.cancel_too_late(status), ephemeral=True)


class VoteButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"askwith:vote:(?P<vote>up|down):(?P<ask_id>\d{1,18})"
):
    def __init__(self, vote: str, ask_id: int) -> None:
        label = chat_texts.VOTE_UP_BUTTON if vote == "up" else chat_texts.VOTE_DOWN_BUTTON
        button = discord.ui.Button(
            label=label, style=discord.ButtonStyle.secondary, custom_id=f"askwith:vote:{vote}:{ask_id}"
        )
        super().__init__(button)
        self.vote = vote
        self.ask_id = ask_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button[Any], match: Any, /
    ) -> VoteButton:
        return cls(match["vote"], int(match["ask_id"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        # Acknowledged before the vote is stored (3 s); the thanks or the refusal is for the voter alone.
        await interaction.response.defer(ephemeral=True, thinking=True)
        asks = _asks(interaction)
        try:
            vote = 1 if self.vote == "up" else -1
            stored = await asks.record_feedback(self.ask_id, str(interaction.user.id), vote)
        except AskError as exc:
            await interaction.followup.send(str(exc), ephemeral=True)
            return
        await interaction.followup.send(follow_up_texts.feedback_thanks(stored), ephemeral=True)


def _asks(interaction: discord.Interaction) -> AskService:
    """The ask service of the server the click came from (the client maps servers to their services, which sit
    above these buttons: they are looked up, never imported)."""
    found = interaction.client.services_for(interaction.guild_id)  # type: ignore[attr-defined]
    if found is None:
        raise WorkspaceError(texts.guild_not_served())
    return found.asks  # type: ignore[no-any-return]


def cancel_view(ask_id: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(CancelButton(ask_id))
    return view


def answer_buttons(ask_id: int, transcript_url: str | None, *, votes: bool = True) -> discord.ui.View:
    """Transcript (a link, when the web workspace serves transcripts), then 👍 and 👎 (not on a cancelled ask:
    there is no answer to judge)."""
    view = discord.ui.View(timeout=None)
    if transcript_url and transcript_url.startswith(("http://", "https://")):
        view.add_item(
            discord.ui.Button(label=chat_texts.TRANSCRIPT_BUTTON, style=discord.ButtonStyle.link, url=transcript_url)
        )
    if votes:
        view.add_item(VoteButton("up", ask_id))
        view.add_item(VoteButton("down", ask_id))
    return view


def register(client: discord.Client) -> None:
    client.add_dynamic_items(CancelButton, VoteButton)
