"""An ask's final post in a Discord channel, thread or DM, as a rich message: its embed (`answer_embeds`), the
asker's mention and the transcript reference as text, and Transcript / 👍 / 👎 buttons.

The flow is the core's (`bot.asks.answer_post`): when the ask has a status message in this process, the status
message *becomes* the answer (one message from question to answer), otherwise a new message is posted; where others
read it, the asker's quotes go by DM. If the answer could not be read (no view), the plain text is posted as it is.
This module gives that flow Discord's calls, and finds the thread a source was said in for its jump link.

    answers = AnswerPosts(port, asks)
    answers.expect(ask_id, AnswerSlot(status, message))   # the status message to turn into the answer
    message_id = await answers.post(target, answer)  # None: not renderable, post its text plainly
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import discord

from adapters.discord import texts
from adapters.discord.answer_embeds import answer_embed
from adapters.discord.status import StatusMessage, StatusState
from adapters.discord.views.ask_controls import answer_buttons
from bot.asks.answer_post import RichAnswerPost
from bot.asks.read_models.answer_view import SourceView
from bot.errors import AskwithError, ChatPlatformError
from bot.platform.port import FinalAnswer
from bot.store.message_places import thread_parents
from bot.texts import transcript_texts


if TYPE_CHECKING:
    from adapters.discord.port import DiscordPort
    from bot.asks.service import AskService


log = logging.getLogger(__name__)


@dataclass
class AnswerSlot:
    status: StatusMessage
    message: discord.Message


class AnswerPosts(RichAnswerPost[AnswerSlot, StatusState, discord.abc.Messageable]):
    """The core's answer flow (`bot.asks.answer_post`) with Discord's calls; a place is the channel or thread."""

    def __init__(self, port: DiscordPort, asks: AskService) -> None:
        super().__init__()
        self.port = port
        self.asks = asks

    @property
    def slots(self) -> dict[int, AnswerSlot]:
        """The status message of each ask followed in this process, waiting to become its answer."""
        return self.statuses

    async def post(self, target: discord.abc.Messageable, answer: FinalAnswer) -> str | None:
        """Post (or edit into its status message) the answer as a rich message; None when it cannot be rendered
        (the caller posts its text plainly)."""
        # asked in a server channel or thread: others read the answer there
        return await self.deliver(answer, target, shared=answer.in_conversation)

    async def into_status(self, status: AnswerSlot, rendered: StatusState) -> str | None:
        return str(status.message.id) if await status.status.close(rendered) else None

    async def post_new(self, place: discord.abc.Messageable, rendered: StatusState) -> str:
        return str((await place.send(**rendered.kwargs(), allowed_mentions=discord.AllowedMentions.none())).id)

    async def send_quotes(self, answer: FinalAnswer, rendered: StatusState) -> None:
        """The lines colleagues' agents released go to the asker alone, by DM, never into the channel."""
        try:
            state = await self.render(answer)
            dm = await self.port.open_dm(answer.requester_id)
            target = self.port.client.get_partial_messageable(int(dm))
            await target.send(**state.kwargs(), allowed_mentions=discord.AllowedMentions.none())
        except discord.HTTPException as exc:
            raise ChatPlatformError("a DM to the asker", texts.refusal(exc.status, exc.code, exc.text)) from exc

    async def rendered(self, answer: FinalAnswer, *, shared: bool = False) -> StatusState | None:
        """The rich message for a final post (None: not renderable, so it stays plain text)."""
        try:
            return await self.render(answer, shared=shared)
        except AskwithError as exc:
            log.warning("ask #%s: answer not rendered, posted as text: %s", answer.ask_id, exc)
            return None

    async def render(self, answer: FinalAnswer, *, shared: bool = False) -> StatusState:
        """The answer as the asker sees it; `shared`: as it may be posted where others read it (no quotes)."""
        view = answer.view
        if view is None:
            raise AskwithError("the answer could not be read")
        threads = await self._threads_of([s.message_id for s in view.linked_sources if s.message_id])

        def permalink(source: SourceView) -> str | None:
            if not source.channel_id or not source.message_id:
                return None
            # a public thread's reply is filed under its channel; Discord's link needs the thread itself
            return self.port.jump_url(threads.get(source.message_id) or source.channel_id, source.message_id)

        public = view.for_shared_place() if shared else view
        embed = answer_embed(public, permalink=permalink)
        content = texts.answer_heading(f"<@{answer.requester_id}>", transcript_texts.transcript_ref(answer.ask_id))
        buttons = answer_buttons(answer.ask_id, view.transcript_url, votes=view.status != "cancelled")
        if shared and view.released_quotes:
            content = f"{content}\n{texts.QUOTES_SENT_BY_DM}"
        return StatusState(content, view=buttons, embeds=[embed])

    async def _threads_of(self, message_ids: list[str]) -> dict[str, str]:
        """Message id -> the Discord thread it was said in, for the sources said in a public thread."""
        if not message_ids:
            return {}
        return await thread_parents(self.asks.db, self.asks.workspace_id, message_ids)
