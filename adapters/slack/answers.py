"""An ask's final post in Slack as a rich Block Kit message, where the question was asked.

The flow is the core's (`bot.asks.answer_post`: the status message becomes the answer, the asker's quotes go by
DM); this module gives it Slack's calls and what only Slack has:
- sources keep only their permalinks where others read the answer (Slack itself checks who may open them);
- the Assistant panel's status line is no message, so its answer is posted in the thread;
- when Slack refuses the conversation (`not_in_channel`, archived, gone), the answer goes to the asker's DM;
- `/ask-with`'s answer in the asker's DM is the core's text, as mrkdwn.

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
from bot.asks.answer_post import RichAnswerPost
from bot.asks.read_models.answer_view import AnswerView
from bot.errors import AskwithError
from bot.platform.port import FinalAnswer
from bot.texts import chat_texts, transcript_texts


if TYPE_CHECKING:
    from adapters.slack.port import SlackPort


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RenderedAnswer:
    text: str
    blocks: list[dict]
    view: AnswerView
    asker_id: str


class AnswerPosts(RichAnswerPost[StatusMessage, RenderedAnswer, tuple[str, str | None]]):
    """The core's answer flow (`bot.asks.answer_post`) with Slack's calls; a place is (channel, thread)."""

    def __init__(self, port: SlackPort) -> None:
        super().__init__()
        self.port = port

    async def post(self, channel_id: str, answer: FinalAnswer, thread_id: str | None) -> str | None:
        """Post (or edit into its status message) the answer; None: posted nothing (the port posts the text)."""
        status = self.statuses.get(answer.ask_id)
        if status is None and not answer.in_conversation:
            # `/ask-with`: the DM answer is the core's text, as mrkdwn (escaped: never raw Markdown)
            ts = await self.port.post_blocks(channel_id, to_mrkdwn(answer.text), None, thread_id=thread_id)
            return message_id(channel_id, ts)
        where = status.channel_id if status is not None and status.ts else channel_id
        shared = not where.startswith("D")  # a channel, group DM or thread: others read it too
        return await self.deliver(answer, (channel_id, thread_id), shared=shared)

    async def release(self, status: StatusMessage | None) -> None:
        if status is not None:
            await status.close()

    async def into_status(self, status: StatusMessage, rendered: RenderedAnswer) -> str | None:
        if not (ts := await status.close()):  # the Assistant panel's status line: no message to take
            return None
        try:
            await self.port.update_blocks(status.channel_id, ts, rendered.text, rendered.blocks)
            return message_id(status.channel_id, ts)
        except AskwithError as exc:
            log.warning("ask #%s: status message not replaced by the answer: %s", status.ask_id, exc)
            return None

    async def post_new(self, place: tuple[str, str | None], rendered: RenderedAnswer) -> str:
        channel_id, thread_id = place
        ts = await self.port.post_blocks(channel_id, rendered.text, rendered.blocks, thread_id=thread_id)
        return message_id(channel_id, ts)

    async def refused(self, answer: FinalAnswer, exc: AskwithError) -> str:
        """Slack refused the conversation (`not_in_channel`, archived, gone): the answer goes to the asker's DM."""
        log.info("ask #%s: the conversation refused the answer (%s); sending it by DM", answer.ask_id, exc)
        dm = await self.port.open_dm(answer.requester_id)
        private = await self.render(answer, shared=False)
        ts = await self.port.post_blocks(dm, private.text, private.blocks)
        return message_id(dm, ts)

    async def render(self, answer: FinalAnswer, *, shared: bool) -> RenderedAnswer:
        view = answer.view
        if view is None:
            raise AskwithError("the answer could not be read")
        if view.status == "cancelled":
            view = replace(view, answer=None)  # the cancelled ending's own text (who cancelled) is the answer
        public = view.for_shared_place() if shared else view
        links = await self._permalinks(public)
        blocks = answer_blocks(public, answer.requester_id, links)
        if shared and view.released_quotes:
            blocks.insert(-1, _context(chat_texts.QUOTES_SENT_BY_DM))
        # The notification text: converted like the blocks, and always ending with the core's marker.
        reference = transcript_texts.transcript_ref(answer.ask_id)
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

    async def send_quotes(self, answer: FinalAnswer, rendered: RenderedAnswer) -> None:
        dm = await self.port.open_dm(rendered.asker_id)
        blocks = quotes_blocks(rendered.view)
        await self.port.post_blocks(dm, texts.quotes_for_you(rendered.view.question), blocks)


def _context(text: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}
