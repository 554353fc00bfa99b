"""One status message per ask, edited as the ask moves, without flooding Discord.

Edits are coalesced: while one edit is on its way (or waiting out the minimum interval), newer states replace the
pending one, so a burst of stages costs one edit, and there is at most one edit per `min_interval_s` (Discord
allows about five edits per five seconds per channel). A 429 is waited out by discord.py up to its
`max_ratelimit_timeout`; a longer one (`discord.RateLimited`) is waited out here, `retry_after` as Discord said,
before the latest state is sent. A status message that was deleted (404, Unknown Message 10008) is left alone.

    status = StatusMessage(edit=lambda state: message.edit(**state.kwargs()))
    status.show(StatusState("Searching Bob's memory…", view=cancel_view))
    await status.close(StatusState("Answered below.", view=None))     # the final state, sent once, in order
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import discord


log = logging.getLogger(__name__)
MIN_EDIT_INTERVAL_S = 1.0
NO_VIEW: Any = None  # `view=None` removes a message's buttons


@dataclass(frozen=True, eq=False)
class StatusState:
    content: str
    view: discord.ui.View | None = None
    embeds: list[discord.Embed] = field(default_factory=list)

    def kwargs(self) -> dict[str, Any]:
        return {"content": self.content, "view": self.view, "embeds": self.embeds}

    def key(self) -> tuple[Any, ...]:
        """What Discord would show: two states with the same key need one edit, not two."""
        items = tuple(repr(item.to_component_dict()) for item in self.view.children) if self.view else ()
        return (self.content, items, tuple(repr(embed.to_dict()) for embed in self.embeds))


Edit = Callable[[StatusState], Awaitable[Any]]


class StatusMessage:
    def __init__(self, edit: Edit, *, min_interval_s: float = MIN_EDIT_INTERVAL_S) -> None:
        self._edit = edit
        self._interval = min_interval_s
        self._pending: StatusState | None = None
        self._shown: StatusState | None = None
        self._last_edit = 0.0
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.gone = False  # the message was deleted: nothing more is edited
        self.edits = 0  # edits sent (for logs and tests)

    @property
    def closed(self) -> bool:
        """The final state was given (it may still be on its way)."""
        return self._closed

    def show(self, state: StatusState) -> None:
        """Show `state` soon; a newer state before then replaces it."""
        if self._closed or self.gone or (self._shown is not None and state.key() == self._shown.key()):
            return
        self._pending = state
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._flush(), name="askwith-discord-status")

    async def close(self, state: StatusState) -> bool:
        """The final state: sent after whatever is on its way, then nothing more. False when it could not be
        shown (the message was deleted, or Discord refused the edit)."""
        if self._closed:
            return False
        self.show(state)
        self._closed = True
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        return self._shown is state

    async def _flush(self) -> None:
        while self._pending is not None and not self.gone:
            wait = self._last_edit + self._interval - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            state, self._pending = self._pending, None
            if state is None or (self._shown is not None and state.key() == self._shown.key()):
                continue
            await self._send(state)

    async def _send(self, state: StatusState) -> None:
        try:
            await self._edit(state)
        except discord.RateLimited as exc:  # longer than discord.py waits inline: wait here, then the latest state
            log.info("status message rate limited for %.1fs", exc.retry_after)
            self._pending = self._pending or state
            self._last_edit = time.monotonic() + exc.retry_after - self._interval
            return
        except discord.NotFound:
            log.info("status message deleted; no more updates to it")
            self.gone = True
            return
        except discord.HTTPException as exc:  # a refused edit is not worth failing the ask over
            log.warning("status message not updated: HTTP %s, code %s", exc.status, exc.code)
        else:
            self.edits += 1
            self._shown = state
        self._last_edit = time.monotonic()
