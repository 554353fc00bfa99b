"""An ask's final post in Slack as a rich Block Kit message, where the question was asked.

The core delivers exactly one final post per ask through `ChatPort.post_answer`, with the answer as its requester
sees it (`bot.port.FinalAnswer`); `SlackPort.post_answer` hands it here, which only renders and places it:
- the ask's status message in this process *becomes* the answer (`chat.update`: one message from question to
  answer), else a new message is posted;
- in a channel or thread, sources keep only their permalinks (Slack itself checks who may open them) and the lines
  colleagues' agents released to the asker go to the asker alone, by DM;
- when Slack refuses the conversation (`not_in_channel`, archived, gone), the answer goes to the asker's DM.
If the answer could not be read (no view), None: the port posts the plain text.

    answers = AnswerPosts(port)
    answers.expect(ask_id, status)                       # the status message to turn into the answer
    message_id = await answers.post(channel_id, answer, thread_id)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from adapters.slack import texts
from adapters.slack.answer_blocks import answer_blocks, quotes_blocks
from adapters.slack.convert import message_id, split_message_id
from adapters.slack.mrkdwn import to_mrkdwn
from adapters.slack.status import StatusMessage
from bot import messages
from bot.asks.answer_view import AnswerView
from bot.errors import AskwithError, PlatformAccessError, PlatformObjectGoneError
from bot.port import FinalAnswer


if TYPE_CHECKING:
    from adapters.slack.port import SlackPort


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RenderedAnswer:
    text: str
    blocks: list[dict]
    view: AnswerView
    asker_id: str


class AnswerPosts:
    def __init__(self, port: SlackPort) -> None:
        self.port = port
        self.statuses: dict[int, StatusMessage] = {}

    def expect(self, ask_id: int, status: StatusMessage) -> None:
        self.statuses[ask_id] = status

    async def post(self, channel_id: str, answer: FinalAnswer, thread_id: str | None) -> str | None:
        """Post (or edit into its status message) the answer; None: posted nothing (the port posts the text)."""
        status = self.statuses.pop(answer.ask_id, None)
        where = status.channel_id if status is not None and status.ts else channel_id
        shared = not where.startswith("D")  # a channel, group DM or thread: others read it too
        if status is None and not answer.in_conversation:
            # `/ask-with`: the DM answer is the core's text, as mrkdwn (escaped: never raw Markdown)
            ts = await self.port.post_blocks(channel_id, to_mrkdwn(answer.text), None, thread_id=thread_id)
            return message_id(channel_id, ts)
        try:
            if answer.view is None:
                raise AskwithError("the answer could not be read")
            rendered = await self.render(answer, shared=shared)
        except AskwithError as exc:
            log.warning("ask #%s: answer not rendered, posted as text: %s", answer.ask_id, exc)
            if status is not None:
                await status.close()
            return None
        try:
            posted = await self._place(channel_id, thread_id, rendered, status)
        except (PlatformAccessError, PlatformObjectGoneError) as exc:  # not_in_channel, archived, deleted
            log.info("ask #%s: %s refused the answer (%s); sending it by DM", answer.ask_id, channel_id, exc)
            dm = await self.port.open_dm(answer.requester_id)
            private = await self.render(answer, shared=False)
            ts = await self.port.post_blocks(dm, private.text, private.blocks)
            return message_id(dm, ts)
        if shared and rendered.view.released_quotes:
            await self._quotes_to_asker(rendered)
        return posted

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

    async def render(self, answer: FinalAnswer, *, shared: bool) -> RenderedAnswer:
        assert answer.view is not None
        view = answer.view
        if view.status == "cancelled":
            view = replace(view, answer=None)  # the cancelled ending's own text (who cancelled) is the answer
        public = view.for_shared_place() if shared else view
        links = await self._permalinks(public)
        blocks = answer_blocks(public, answer.requester_id, links)
        if shared and view.released_quotes:
            blocks.insert(-1, _context(texts.QUOTES_SENT_BY_DM))
        # The notification text: converted like the blocks, and always ending with the core's marker.
        reference = messages.transcript_ref(answer.ask_id)
        body = view.answer or answer.text.replace(reference, "")
        fallback = texts.answer_fallback(to_mrkdwn(body.strip()), reference)
        return RenderedAnswer(fallback, blocks, view, answer.requester_id)

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
