"""One status message per ask that follows its stages with `chat.update`, without flooding Slack.

Slack allows about one update per second per message (chat.update is Tier 3 and rate-limited per channel); the
core's `StatusWriter` coalesces the stages (the latest wins, at most one `chat.update` per `min_interval_s`, a 429
waited out for its `Retry-After`). This module is Slack's part: the status line as Block Kit, written with
`chat.update` (or the Assistant panel's `assistant.threads.setStatus`). `close` stops the writer and hands the
message over (the answer replaces it), so a late stage can never overwrite the answer.

    status = await StatusMessage.post(port, channel_id, thread_id, ask_id)
    status.show(progress.text, final=progress.final)     # never blocks; coalesced
    message_ts = await status.close()                      # the writer stopped; the message is the caller's now
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from adapters.slack import texts
from adapters.slack.answer_blocks import status_blocks
from bot.asks.status_writer import StatusWriter


if TYPE_CHECKING:
    from adapters.slack.port import SlackPort


MIN_UPDATE_INTERVAL_S = 1.0
StatusLine = tuple[str, bool]  # the line shown, and whether it is the last stage (no Cancel button then)


class StatusMessage:
    def __init__(
        self, port: SlackPort, channel_id: str, ts: str, ask_id: int, *, min_interval_s: float = MIN_UPDATE_INTERVAL_S
    ) -> None:
        self.port = port
        self.channel_id = channel_id
        self.ts = ts
        self.ask_id = ask_id
        self.writer: StatusWriter[StatusLine] = StatusWriter(
            self, min_interval_s=min_interval_s, label=f"ask #{ask_id}: status message"
        )

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

    def show(self, stage_text: str, *, final: bool) -> None:
        self.writer.show((texts.status_line(stage_text, final=final), final))

    async def close(self) -> str:
        """Stop updating (an update in flight finishes first); returns the message's ts for the answer to take."""
        await self.writer.stop()
        return self.ts

    # ------------------------------------------------------------------ the StatusSurface the writer edits
    async def edit(self, state: StatusLine) -> None:
        line, final = state
        await self.port.update_blocks(self.channel_id, self.ts, line, status_blocks(self.ask_id, line, final=final))

    def shown_as(self, state: StatusLine) -> Hashable:
        return state


class AssistantStatus(StatusMessage):
    """The Assistant side panel's own status line (`assistant.threads.setStatus`) instead of a status message:
    the same coalescing; Slack clears it when the answer is posted in the thread. `close` returns "": there is no
    message for the answer to take, so it is posted in the thread."""

    def __init__(
        self, port: SlackPort, channel_id: str, thread_ts: str, ask_id: int, *, min_interval_s: float
    ) -> None:
        super().__init__(port, channel_id, "", ask_id, min_interval_s=min_interval_s)
        self.thread_ts = thread_ts

    async def edit(self, state: StatusLine) -> None:
        line, final = state
        await self.port.set_assistant_status(self.channel_id, self.thread_ts, "" if final else line)
