"""An ask's final post as a rich message: the flow every chat platform shares, written once. An adapter subclasses
`RichAnswerPost` and supplies only the platform calls (render, edit a status message, post, DM the quotes).

- the ask's status message in this process *becomes* the answer (one message from question to answer); when it
  cannot take it (gone, refused), a new message is posted;
- where others read the answer (a channel, a thread), the lines colleagues' agents released to the asker are left
  out of it (the adapter renders it so) and go to the asker alone, by DM;
- an answer that cannot be read (no view) posts nothing here: the port posts the core's plain text;
- a place that refuses the answer (`PlatformAccessError`, `PlatformObjectGoneError`) is the adapter's to handle
  (`refused`: Slack answers by DM; by default the refusal propagates).

    class AnswerPosts(RichAnswerPost[StatusMessage, RenderedAnswer, str]): ...
    answers.expect(ask_id, status)                          # the status message to turn into the answer
    message_id = await answers.deliver(answer, channel, shared=True)   # None: the port posts the plain text
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from bot.errors import AskwithError, PlatformAccessError, PlatformObjectGoneError
from bot.platform.port import FinalAnswer


log = logging.getLogger(__name__)

Status = TypeVar("Status")  # the platform's status message of an ask
Rendered = TypeVar("Rendered")  # the answer as the platform posts it
Place = TypeVar("Place")  # where a new message goes


class RichAnswerPost(ABC, Generic[Status, Rendered, Place]):
    def __init__(self) -> None:
        self.statuses: dict[int, Status] = {}

    def expect(self, ask_id: int, status: Status) -> None:
        """`status` follows the ask in this process: the answer takes its place."""
        self.statuses[ask_id] = status

    async def deliver(self, answer: FinalAnswer, place: Place, *, shared: bool) -> str | None:
        """Post the answer (into its status message when it has one); None: posted nothing. `shared`: others read
        the place, so the asker's quotes go by DM."""
        status = self.statuses.pop(answer.ask_id, None)
        try:
            if answer.view is None:
                raise AskwithError("the answer could not be read")
            rendered = await self.render(answer, shared=shared)
        except AskwithError as exc:
            log.warning("ask #%s: answer not rendered, posted as text: %s", answer.ask_id, exc)
            await self.release(status)
            return None
        try:
            posted = await self.into_status(status, rendered) if status is not None else None
            if posted is None:
                posted = await self.post_new(place, rendered)
        except (PlatformAccessError, PlatformObjectGoneError) as exc:  # not in the channel, archived, deleted
            return await self.refused(answer, exc)
        if shared and answer.view.released_quotes:
            await self._quotes_to_requester(answer, rendered)
        return posted

    async def _quotes_to_requester(self, answer: FinalAnswer, rendered: Rendered) -> None:
        try:
            await self.send_quotes(answer, rendered)
        except AskwithError as exc:  # the answer is posted; the quotes are a courtesy on top
            log.warning("ask #%s: quoted sources not sent to the asker: %s", answer.ask_id, exc)

    # ------------------------------------------------------------------ the platform's part
    @abstractmethod
    async def render(self, answer: FinalAnswer, *, shared: bool) -> Rendered:
        """The answer as the asker sees it; `shared`: as it may be posted where others read it (no quotes).
        Raises AskwithError when it cannot be rendered."""
        raise NotImplementedError()

    @abstractmethod
    async def into_status(self, status: Status, rendered: Rendered) -> str | None:
        """Turn the status message into the answer; its message id, or None when it could not take it."""
        raise NotImplementedError()

    @abstractmethod
    async def post_new(self, place: Place, rendered: Rendered) -> str:
        raise NotImplementedError()

    @abstractmethod
    async def send_quotes(self, answer: FinalAnswer, rendered: Rendered) -> None:
        """DM the asker the lines colleagues' agents released to them alone (AskwithError when it fails)."""
        raise NotImplementedError()

    async def release(self, status: Status | None) -> None:
        """The answer was not rendered: what becomes of the status message (by default it keeps following)."""

    async def refused(self, answer: FinalAnswer, exc: AskwithError) -> str | None:
        """The place refused the answer; by default the refusal propagates."""
        raise exc
