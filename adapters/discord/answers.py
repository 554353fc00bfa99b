"""An ask's final post in a Discord channel, thread or DM, as a rich message: its embed (`answer_embeds`), the
asker's mention and the transcript reference as text, and Transcript / 👍 / 👎 buttons.

The core delivers exactly one final post per ask through `ChatPort.post`, whose text carries the ask's transcript
reference (`bot.messages.transcript_ref`, the marker the core itself looks for when it checks whether a final post
went out). The port hands such a post here: when the ask has a status message in this process, the status message
*becomes* the answer (one message from question to answer); otherwise a new message is posted. If the answer
cannot be read (another workspace's ask, a core error), the plain text is posted as it is.

    answers = AnswerPosts(port, asks)
    answers.expect(ask_id, status, message)      # the status message to turn into the answer
    message_id = await answers.post(target, text)  # None: not a final post, post it plainly
"""

from __future__ import annotations

import logging
import re
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
from bot.asks.models import FINISHED
from bot.errors import AskwithError
from bot.store import models as store_models


if TYPE_CHECKING:
    from adapters.discord.port import DiscordPort
    from bot.asks.service import AskService


log = logging.getLogger(__name__)
FINAL_POST = re.compile(re.escape(messages.transcript_ref(0)).replace("0", r"(\d+)", 1))


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

    @staticmethod
    def final_post_of(text: str) -> int | None:
        match = FINAL_POST.search(text or "")
        return int(match.group(1)) if match else None

    async def post(self, target: discord.abc.Messageable, text: str) -> str | None:
        """Post (or edit into its status message) the final post `text` as a rich message; None when `text` is
        not a final post of this workspace's asks, or the answer cannot be rendered (the caller posts it plainly)."""
        ask_id = self.final_post_of(text)
        shared = ask_id is not None and await self._asked_in_shared_place(ask_id)
        state = await self.rendered(text, shared=shared)
        if ask_id is None or state is None:
            return None
        slot = self.slots.pop(ask_id, None)
        if slot is not None and await slot.status.close(state):
            posted = str(slot.message.id)
        else:
            sent = await target.send(**state.kwargs(), allowed_mentions=discord.AllowedMentions.none())
            posted = str(sent.id)
        if shared and state.withheld_quotes:
            await self._quotes_to_requester(ask_id)
        return posted

    async def _asked_in_shared_place(self, ask_id: int) -> bool:
        """Asked in a server channel or thread (others read the answer there), not in a DM."""
        try:
            return (await self.asks.load(ask_id)).origin_channel_id is not None
        except AskwithError:
            return False

    async def _quotes_to_requester(self, ask_id: int) -> None:
        """The lines colleagues' agents released go to the asker alone, by DM, never into the channel."""
        try:
            ask = await self.asks.load(ask_id)
            state = await self.render(ask_id)
            requester = await self.asks.roster.profile(ask.requester)
            dm = await self.port.open_dm(requester.platform_id)
            target = self.port.client.get_partial_messageable(int(dm))
            await target.send(**state.kwargs(), allowed_mentions=discord.AllowedMentions.none())
        except (AskwithError, discord.HTTPException) as exc:
            log.warning("ask #%s: the quoted sources could not be sent to the asker by DM: %s", ask_id, exc)

    async def rendered(self, text: str, *, shared: bool = False) -> StatusState | None:
        """The rich message for a final post (None: not one, or not renderable, so it stays plain text)."""
        ask_id = self.final_post_of(text)
        if ask_id is None:
            return None
        try:
            return await self.render(ask_id, shared=shared)
        except AskwithError as exc:
            log.warning("ask #%s: answer not rendered, posted as text: %s", ask_id, exc)
            return None

    async def render(self, ask_id: int, *, shared: bool = False) -> StatusState:
        """The answer as the asker sees it; `shared`: as it may be posted where others read it (no quotes)."""
        ask = await self.asks.load(ask_id)
        if ask.workspace_id != self.asks.workspace_id:
            raise AskwithError(f"ask #{ask_id} belongs to another workspace")
        view = await self.asks.answer_view(ask_id, viewer=ask.requester)
        if view.status not in FINISHED:  # the final post goes out just before the row says how the ask ended
            view.status = (await self.asks._status(ask)).value  # the core's own rule (cancelled, failed, ...)
        requester = await self.asks.roster.profile(ask.requester)
        threads = await self._threads_of([s.message_id for s in view.linked_sources if s.message_id])

        def permalink(source: SourceView) -> str | None:
            if not source.channel_id or not source.message_id:
                return None
            # a public thread's reply is filed under its channel; Discord's link needs the thread itself
            return self.port.jump_url(threads.get(source.message_id) or source.channel_id, source.message_id)

        public = view.for_shared_place() if shared else view
        embed = answer_embed(public, permalink=permalink)
        content = texts.answer_heading(f"<@{requester.platform_id}>", messages.transcript_ref(ask_id))
        buttons = answer_buttons(ask_id, view.transcript_url, votes=view.status != "cancelled")
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
