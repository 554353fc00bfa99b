"""Following an ask in its status message: each stage edits the one message (coalesced, rate-limited by
`StatusMessage`), with a Cancel button until the end; the answer itself then replaces the status (the port turns
the ask's final post into an edit of this message, see `DiscordPort.post`).

Stages come from the core's `watch_progress`: at once from its in-process hub when the ask runs here, else from
the ask's row every `POLL_S`, so an ask run by another worker process is followed too.

    AskProgress.follow(svc, ask_id, status_message, requester=member, first=state)
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import discord

from adapters.discord import texts
from adapters.discord.answers import AnswerSlot
from adapters.discord.calls import interaction_gone
from adapters.discord.status import StatusMessage, StatusState
from adapters.discord.views.ask_controls import cancel_view
from bot.asks.progress import watch_progress


if TYPE_CHECKING:
    from adapters.discord.services import DiscordServices


log = logging.getLogger(__name__)
POLL_S = 2.0  # how often the ask's row is read (the hub is immediate when the ask runs here)
FOLLOW_AT_MOST_S = 3 * 3600.0  # an ask still not finished by then is left alone (its answer still arrives)


class AskProgress:
    _running: set[asyncio.Task[None]] = set()  # strong references: a task nobody holds may be collected

    def __init__(self, svc: DiscordServices, ask_id: int, status: StatusMessage, mention: str) -> None:
        self.svc = svc
        self.ask_id = ask_id
        self.status = status
        self.mention = mention

    @classmethod
    def follow(
        cls, svc: DiscordServices, ask_id: int, message: discord.Message, *, requester: Any, first: StatusState
    ) -> StatusMessage:
        """Start following; the status message is registered with the port, which turns it into the answer."""
        status = StatusMessage(_Editor(message))
        svc.answers.expect(ask_id, AnswerSlot(status, message))
        progress = cls(svc, ask_id, status, requester.mention)
        status.show(StatusState(first.content, view=cancel_view(ask_id)))
        task = asyncio.create_task(progress.run(), name=f"askwith-discord-progress-{ask_id}")
        cls._running.add(task)
        task.add_done_callback(cls._running.discard)
        return status

    async def run(self) -> None:
        try:
            async with asyncio.timeout(FOLLOW_AT_MOST_S):
                async for stage in watch_progress(self.svc.db, self.svc.asks.progress, self.ask_id, interval_s=POLL_S):
                    if stage.final:
                        await self._finished(stage.text)
                        return
                    self.status.show(
                        StatusState(texts.status_line(self.mention, stage.text), view=cancel_view(self.ask_id))
                    )
        except TimeoutError:
            log.info("ask #%s: stopped following its progress", self.ask_id)
        except Exception:  # following is a courtesy: the ask and its answer go on without it
            log.exception("ask #%s: following its progress failed", self.ask_id)

    async def _finished(self, stage_text: str) -> None:
        """Normally the port has already turned the status into the answer. When another process posted the answer
        (it ran the ask), the status message still shows a stage and Cancel: it says how the ask ended instead."""
        self.svc.answers.slots.pop(self.ask_id, None)
        if not self.status.closed:
            await self.status.close(StatusState(texts.status_finished(self.mention, stage_text)))


class _Editor:
    """Edits a status message through the interaction while its token lives (the response to a form), then as the
    bot's own message (after 15 minutes Discord answers 401/50027, or 404 once it forgot the token)."""

    def __init__(self, message: discord.Message) -> None:
        self.message = message
        self.as_bot = message.channel.get_partial_message(message.id)  # type: ignore[union-attr]
        self.via_interaction = isinstance(message, discord.InteractionMessage)

    async def __call__(self, state: StatusState) -> None:
        if self.via_interaction:
            try:
                await self.message.edit(**state.kwargs())
                return
            except discord.HTTPException as exc:
                if not interaction_gone(exc):
                    raise
                self.via_interaction = False
        await self.as_bot.edit(**state.kwargs())
