"""One status message per ask that follows its stages with `chat.update`, without flooding Slack.

Slack allows about one update per second per message (chat.update is Tier 3 and rate-limited per channel), so
updates are coalesced: the latest stage wins, at most one `chat.update` per `min_interval_s`, and a 429 waits out
its `Retry-After` before the (then latest) stage is written. `close` stops the writer and hands the message over
(the answer replaces it), so a late stage can never overwrite the answer.

    status = await StatusMessage.post(port, channel_id, thread_id, ask_id)
    status.show(progress.text, final=progress.final)     # never blocks; coalesced
    message_ts = await status.close()                      # the writer stopped; the message is the caller's now
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from adapters.slack import texts
from adapters.slack.answer_blocks import status_blocks
from bot.errors import ChatPlatformError, PlatformRateLimitedError


if TYPE_CHECKING:
    from adapters.slack.port import SlackPort


log = logging.getLogger(__name__)
MIN_UPDATE_INTERVAL_S = 1.0


class StatusMessage:
    def __init__(
        self, port: SlackPort, channel_id: str, ts: str, ask_id: int, *, min_interval_s: float = MIN_UPDATE_INTERVAL_S
    ) -> None:
        self.port = port
        self.channel_id = channel_id
        self.ts = ts
        self.ask_id = ask_id
        self.min_interval_s = min_interval_s
        self.updates = 0  # chat.update calls that went through (for tests and logs)
        self._wanted: tuple[str, bool] | None = None
        self._shown: tuple[str, bool] | None = None
        self._changed = asyncio.Event()
        self._closed = False
        self._last_write = 0.0
        self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    @classmethod
    async def post(
        cls,
        port: SlackPort,
        channel_id: str,
        thread_id: str | None,
        ask_id: int,
        min_interval_s: float = MIN_UPDATE_INTERVAL_S,
    ) -> StatusMessage:
        line = texts.status_starting()
        ts = await port.post_blocks(channel_id, line, status_blocks(ask_id, line, final=False), thread_id=thread_id)
        return cls(port, channel_id, ts, ask_id, min_interval_s=min_interval_s)

    @property
    def message_id(self) -> str:
        return f"{self.channel_id}:{self.ts}"

    def show(self, stage_text: str, *, final: bool) -> None:
        if self._closed:
            return
        self._wanted = (texts.status_line(stage_text, final=final), final)
        self._changed.set()

    async def close(self) -> str:
        """Stop updating (an update in flight finishes first); returns the message's ts for the answer to take."""
        self._closed = True
        self._changed.set()
        await asyncio.gather(self._writer, return_exceptions=True)
        return self.ts

    async def _write_loop(self) -> None:
        while True:
            await self._changed.wait()
            self._changed.clear()
            if self._closed:
                return
            wait = self._last_write + self.min_interval_s - time.monotonic()
            if wait > 0:  # coalesce: whatever arrives meanwhile replaces what is waiting
                await asyncio.sleep(wait)
                if self._closed:
                    return
            wanted = self._wanted
            if wanted is None or wanted == self._shown:
                continue
            await self._write(*wanted)

    async def _send(self, line: str, final: bool) -> None:
        await self.port.update_blocks(self.channel_id, self.ts, line, status_blocks(self.ask_id, line, final=final))

    async def _write(self, line: str, final: bool) -> None:
        try:
            await self._send(line, final)
        except PlatformRateLimitedError as exc:  # longer than the client sits through: wait, then write the latest
            log.info("ask #%s: status update rate-limited for %.1fs", self.ask_id, exc.retry_after)
            self._last_write = time.monotonic() + exc.retry_after - self.min_interval_s
            self._changed.set()
            return
        except ChatPlatformError as exc:
            log.warning("ask #%s: status update failed: %s", self.ask_id, exc)
        else:
            self._shown = (line, final)
            self.updates += 1
        self._last_write = time.monotonic()


class AssistantStatus(StatusMessage):
    """The Assistant side panel's own status line (`assistant.threads.setStatus`) instead of a status message:
    the same coalescing; Slack clears it when the answer is posted in the thread. `close` returns "": there is no
    message for the answer to take, so it is posted in the thread."""

    def __init__(
        self, port: SlackPort, channel_id: str, thread_ts: str, ask_id: int, *, min_interval_s: float
    ) -> None:
        super().__init__(port, channel_id, "", ask_id, min_interval_s=min_interval_s)
        self.thread_ts = thread_ts

    async def _send(self, line: str, final: bool) -> None:
        await self.port.set_assistant_status(self.channel_id, self.thread_ts, "" if final else line)
