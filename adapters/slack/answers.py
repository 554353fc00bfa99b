"""An ask's final post in Slack as a rich Block Kit message, where the question was asked.

The core delivers exactly one final post per ask through `ChatPort.post`, whose text carries the ask's transcript
reference (`bot.messages.transcript_ref`, which the core also looks for when it checks whether a final post went
out, so the fallback `text` keeps it). `SlackPort.post` hands such a post here:
- the ask's status message in this process *becomes* the answer (`chat.update`: one message from question to
  answer), else a new message is posted;
- in a channel or thread, sources keep only their permalinks (Slack itself checks who may open them) and the lines
  colleagues' agents released to the asker go to the asker alone, by DM;
- when Slack refuses the conversation (`not_in_channel`, archived, gone), the answer goes to the asker's DM.
If the answer cannot be read (another workspace's ask, a core error), None: the port posts the plain text.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adapters.slack import texts
from adapters.slack.answer_blocks import answer_blocks, quotes_blocks
from adapters.slack.convert import message_id, split_message_id
from adapters.slack.mrkdwn import to_mrkdwn
from adapters.slack.status import StatusMessage
from bot import messages
from bot.asks.answer_view import AnswerView
from bot.asks.models import FINISHED
from bot.errors import AskwithError, PlatformAccessError, PlatformObjectGoneError


if TYPE_CHECKING:
    from adapters.slack.port import SlackPort
    from bot.asks.service import AskService


log = logging.getLogger(__name__)
FINAL_POST = re.compile(re.escape(messages.transcript_ref(0)).replace("0", r"(\d+)", 1))


@dataclass(frozen=True)
class RenderedAnswer:
    text: str
    blocks: list[dict]
    view: AnswerView
    asker_id: str


class AnswerPosts:
    def __init__(self, port: SlackPort, asks: AskService) -> None:
        self.port = port
        self.asks = asks
        self.statuses: dict[int, StatusMessage] = {}
        port.final_posts = self.post

    def expect(self, ask_id: int, status: StatusMessage) -> None:
        self.statuses[ask_id] = status

    @staticmethod
    def final_post_of(text: str) -> int | None:
        match = FINAL_POST.search(text or "")
        return int(match.group(1)) if match else None

    async def post(self, channel_id: str, text: str, thread_id: str | None) -> str | None:
        ask_id = self.final_post_of(text)
        if ask_id is None:
            return None
        status = self.statuses.pop(ask_id, None)
        where = status.channel_id if status is not None and status.ts else channel_id
        shared = not where.startswith("D")  # a channel, group DM or thread: others read it too
        try:
            if status is None and not await self._asked_in_conversation(ask_id):
                # `/ask-with`: the DM answer is the core's text, as mrkdwn (escaped: never raw Markdown)
                ts = await self.port.post_blocks(channel_id, to_mrkdwn(text), None, thread_id=thread_id)
                return message_id(channel_id, ts)
            rendered = await self.render(ask_id, text, shared=shared)
        except AskwithError as exc:
            log.warning("ask #%s: answer not rendered, posted as text: %s", ask_id, exc)
            if status is not None:
                await status.close()
            return None
        try:
            posted = await self._place(channel_id, thread_id, rendered, status)
        except (PlatformAccessError, PlatformObjectGoneError) as exc:  # not_in_channel, archived, deleted
            log.info("ask #%s: %s refused the answer (%s); sending it by DM", ask_id, channel_id, exc)
            dm = await self.port.open_dm(rendered.asker_id)
            private = await self.render(ask_id, text, shared=False)
            ts = await self.port.post_blocks(dm, private.text, private.blocks)
            return message_id(dm, ts)
        if shared and rendered.view.released_quotes:
            await self._quotes_to_asker(rendered)
        return posted

    async def _asked_in_conversation(self, ask_id: int) -> bool:
        return (await self.asks.load(ask_id)).origin_channel_id is not None

    async def _place(
        self, channel_id: str, thread_id: str | None, rendered: RenderedAnswer, status: StatusMessage | None
    ) -> str:
        if status is not None and (ts := await status.close()):
            try:
                await self.port.update_blocks(status.channel_id, ts, rendered.text, rendered.blocks)
                return message_id(status.channel_id, ts)
            except AskwithError as exc:
                log.warning("ask #%s: status message not replaced by the answer: %s", status.ask_id, exc)
        ts = await self.port.post_blocks(channel_id, rendered.text, rendered.blocks, thread_id=thread_id)
        return message_id(channel_id, ts)

    async def render(self, ask_id: int, text: str, *, shared: bool) -> RenderedAnswer:
        ask = await self.asks.load(ask_id)
        if ask.workspace_id != self.asks.workspace_id:
            raise AskwithError(f"ask #{ask_id} belongs to another workspace")
        view = await self.asks.answer_view(ask_id, viewer=ask.requester)
        if view.status not in FINISHED:  # the final post goes out just before the row says how the ask ended
            view.status = (await self.asks._status(ask)).value
        if view.status == "cancelled":
            view.answer = None  # the cancelled ending's own text (who cancelled) is the answer
        view.final_text = text
        asker_id = (await self.asks.roster.profile(ask.requester)).platform_id
        public = view.for_shared_place() if shared else view
        links = await self._permalinks(public)
        blocks = answer_blocks(public, asker_id, links)
        if shared and view.released_quotes:
            blocks.insert(-1, _context(texts.QUOTES_SENT_BY_DM))
        # The notification text: converted like the blocks, and always ending with the core's marker.
        body = view.answer or text.replace(messages.transcript_ref(ask_id), "")
        fallback = texts.answer_fallback(to_mrkdwn(body.strip()), messages.transcript_ref(ask_id))
        return RenderedAnswer(fallback, blocks, view, asker_id)

    async def _permalinks(self, view: AnswerView) -> dict[tuple[str, str], str]:
        links: dict[tuple[str, str], str] = {}
        for source in view.linked_sources:
            if source.visible_to_viewer and source.channel_id and source.message_id:
                channel_id = split_message_id(source.message_id)[0] or source.channel_id
                url = await self.port.permalink(channel_id, source.message_id)
                if url:
                    links[(source.channel_id, source.message_id)] = url
        return links

    async def _quotes_to_asker(self, rendered: RenderedAnswer) -> None:
        try:
            dm = await self.port.open_dm(rendered.asker_id)
            blocks = quotes_blocks(rendered.view)
            await self.port.post_blocks(dm, texts.quotes_for_you(rendered.view.question), blocks)
        except AskwithError as exc:
            log.warning("ask #%s: quoted sources not sent to the asker: %s", rendered.view.ask_id, exc)


def _context(text: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}
