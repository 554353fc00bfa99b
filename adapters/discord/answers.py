"""An ask's final post in a Discord channel, thread or DM, as a rich message: its embed (`answer_embeds`), the
asker's mention and the transcript reference as text, and Transcript / 👍 / 👎 buttons.

The core delivers exactly one final post per ask through `ChatPort.post_answer`, with the answer as its requester
sees it (`bot.port.FinalAnswer`); the port hands it here, which only renders and places it: when the ask has a
status message in this process, the status message *becomes* the answer (one message from question to answer);
otherwise a new message is posted. If the answer could not be read (no view), the plain text is posted as it is.

    answers = AnswerPosts(port, asks)
    answers.expect(ask_id, status, message)        # the status message to turn into the answer
    message_id = await answers.post(target, answer)  # None: not renderable, post its text plainly
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import discord
from sqlalchemy import select

from adapters.discord import texts
from adapters.discord.answer_embeds import answer_embed
from adapters.discord.status import StatusMessage, StatusState
from adapters.discord.views.ask_controls import answer_buttons
from bot import messages
from bot.asks.answer_view import SourceView
from bot.errors import AskwithError
from bot.port import FinalAnswer
from bot.store import models as store_models


if TYPE_CHECKING:
    from adapters.discord.port import DiscordPort
    from bot.asks.service import AskService


log = logging.getLogger(__name__)


@dataclass
class AnswerSlot:
    status: StatusMessage
    message: discord.Message


class AnswerPosts:
    def __init__(self, port: DiscordPort, asks: AskService) -> None:
        self.port = port
        self.asks = asks
        self.slots: dict[int, AnswerSlot] = {}

    def expect(self, ask_id: int, status: StatusMessage, message: discord.Message) -> None:
        self.slots[ask_id] = AnswerSlot(status, message)

    async def post(self, target: discord.abc.Messageable, answer: FinalAnswer) -> str | None:
        """Post (or edit into its status message) the answer as a rich message; None when it cannot be rendered
        (the caller posts its text plainly)."""
        shared = answer.in_conversation  # asked in a server channel or thread: others read the answer there
        state = await self.rendered(answer, shared=shared)
        if state is None:
            return None
        slot = self.slots.pop(answer.ask_id, None)
        if slot is not None and await slot.status.close(state):
            posted = str(slot.message.id)
        else:
            sent = await target.send(**state.kwargs(), allowed_mentions=discord.AllowedMentions.none())
            posted = str(sent.id)
        if shared and state.withheld_quotes:
            await self._quotes_to_requester(answer)
        return posted

    async def _quotes_to_requester(self, answer: FinalAnswer) -> None:
        """The lines colleagues' agents released go to the asker alone, by DM, never into the channel."""
        try:
            state = await self.render(answer)
            dm = await self.port.open_dm(answer.requester_id)
            target = self.port.client.get_partial_messageable(int(dm))
            await target.send(**state.kwargs(), allowed_mentions=discord.AllowedMentions.none())
        except (AskwithError, discord.HTTPException) as exc:
            log.warning("ask #%s: the quoted sources could not be sent to the asker by DM: %s", answer.ask_id, exc)

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
        content = texts.answer_heading(f"<@{answer.requester_id}>", messages.transcript_ref(answer.ask_id))
        buttons = answer_buttons(answer.ask_id, view.transcript_url, votes=view.status != "cancelled")
        withheld_quotes = shared and bool(view.released_quotes)
        if withheld_quotes:
            content = f"{content}\n{texts.QUOTES_SENT_BY_DM}"
        return StatusState(content, view=buttons, embeds=[embed], withheld_quotes=withheld_quotes)

    async def _threads_of(self, message_ids: list[str]) -> dict[str, str]:
        """Message id -> the Discord thread it was said in, for the sources said in a public thread."""
        if not message_ids:
            return {}
        message = store_models.Message
        stmt = select(message.platform_id, message.thread_parent_platform_id).where(
            message.workspace_id == self.asks.workspace_id,
            message.platform_id.in_(message_ids),
            message.thread_parent_platform_id.is_not(None),
        )
        async with self.asks.db.session() as session:
            return {m: t for m, t in (await session.execute(stmt)).all() if t}
