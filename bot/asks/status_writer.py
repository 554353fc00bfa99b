"""An ask's status message kept on its latest state without flooding the chat platform: the loop every platform
shares, written once. An adapter passes its part as a `StatusSurface`: how a state is shown (the edit call, which
renders it the platform's way) and what the platform would show for it; its refusals arrive as askwith's errors.

- latest wins: a state given while another waits replaces it, so a burst of stages costs one edit;
- at most one edit per `min_interval_s` (platforms limit edits of one message);
- a rate-limited edit (`PlatformRateLimitedError`) waits out its `retry_after`, then the latest state is written;
- a refused edit (`ChatPlatformError`) is logged and the next state still goes; a message that is gone
  (`PlatformObjectGoneError`) stops the writer;
- `finish(final)` writes the final state after what is on its way, then nothing more; `stop()` drops what waits
  (the caller takes the message over).

    writer = StatusWriter(surface, min_interval_s=1.0, label="ask #7")
    writer.show(state)                    # never blocks
    shown = await writer.finish(final)    # False: the final state could not be shown
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, Protocol, TypeVar

from bot.errors import ChatPlatformError, PlatformObjectGoneError, PlatformRateLimitedError


log = logging.getLogger(__name__)

State = TypeVar("State")
State_contra = TypeVar("State_contra", contravariant=True)
Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[object]]


class StatusSurface(Protocol[State_contra]):
    """The platform's part of a status message."""

    async def edit(self, state: State_contra) -> None:
        """Render `state` and edit the message to it. Raises `PlatformRateLimitedError` (wait `retry_after`),
        `PlatformObjectGoneError` (the message is gone) or another `ChatPlatformError` (this edit was refused)."""
        ...

    def shown_as(self, state: State_contra) -> Hashable:
        """What the platform would show for `state`: two states shown alike cost one edit, not two."""
        ...


class StatusWriter(Generic[State]):
    def __init__(
        self,
        surface: StatusSurface[State],
        *,
        min_interval_s: float,
        label: str = "status message",
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.surface = surface
        self.min_interval_s = min_interval_s
        self.label = label  # names the message in logs
        self._clock = clock
        self._sleep = sleep
        self._pending: State | None = None
        self._shown: State | None = None
        self._last_edit = float("-inf")
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._dropped = False
        self.gone = False  # the message is gone: nothing more is edited
        self.edits = 0  # edits that went through (for logs and tests)

    @property
    def closed(self) -> bool:
        """`finish` or `stop` was called (a last edit may still be on its way)."""
        return self._closed

    def show(self, state: State) -> None:
        """Show `state` soon; a newer state before then replaces it."""
        if self._closed or self.gone:
            return
        self._pending = state
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush(), name=f"askwith-status {self.label}")

    async def finish(self, final: State) -> bool:
        """The final state: written after whatever is on its way, then nothing more. True when the message shows
        it; False when it could not be shown (the message is gone, the platform refused the edit, or the writer was
        already closed)."""
        if self._closed:
            return False
        self.show(final)
        self._closed = True
        await self._drain()
        return self._shown is not None and self._same(self._shown, final)

    async def stop(self) -> None:
        """Nothing more is written: what waits is dropped; an edit already on its way finishes first."""
        self._closed = True
        self._dropped = True
        self._pending = None
        await self._drain()

    async def _drain(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _flush(self) -> None:
        while self._pending is not None and not self.gone:
            wait = self._last_edit + self.min_interval_s - self._clock()
            if wait > 0:  # whatever arrives meanwhile replaces what is waiting
                await self._sleep(wait)
            state, self._pending = self._pending, None
            if state is None or (self._shown is not None and self._same(state, self._shown)):
                continue
            await self._edit(state)

    def _same(self, a: State, b: State) -> bool:
        return self.surface.shown_as(a) == self.surface.shown_as(b)

    async def _edit(self, state: State) -> None:
        try:
            await self.surface.edit(state)
        except PlatformRateLimitedError as exc:  # longer than the client sits through: wait, then the latest state
            log.info("%s: edit rate-limited for %.1fs", self.label, exc.retry_after)
            if not self._dropped:
                self._pending = self._pending if self._pending is not None else state
            self._last_edit = self._clock() + exc.retry_after - self.min_interval_s
            return
        except PlatformObjectGoneError as exc:
            log.info("%s: gone (%s); no more edits to it", self.label, exc)
            self.gone = True
            return
        except ChatPlatformError as exc:  # a refused edit is not worth failing the ask over
            log.warning("%s: not updated: %s", self.label, exc)
        else:
            self._shown = state
            self.edits += 1
        self._last_edit = self._clock()
