"""One status message per ask, edited as the ask moves, without flooding Discord.

The core's `StatusWriter` coalesces the edits (newer states replace the pending one, at most one edit per
`min_interval_s`: Discord allows about five edits per five seconds per channel). This module is Discord's part: a
state as content, buttons and embeds, and the edit call. A 429 is waited out by discord.py up to its
`max_ratelimit_timeout`; a longer one (`discord.RateLimited`) becomes `PlatformRateLimitedError`, waited out by the
writer, `retry_after` as Discord said. A status message that was deleted (404, Unknown Message 10008) is left alone.

    status = StatusMessage(edit=lambda state: message.edit(**state.kwargs()))
    status.show(StatusState("Searching Bob's memory…", view=cancel_view))
    await status.close(StatusState("Answered below.", view=None))     # the final state, sent once, in order
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import discord

from adapters.discord.calls import platform_call
from bot.asks.status_writer import StatusWriter


MIN_EDIT_INTERVAL_S = 1.0


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
        self.writer: StatusWriter[StatusState] = StatusWriter(self, min_interval_s=min_interval_s)

    @property
    def closed(self) -> bool:
        """The final state was given (it may still be on its way)."""
        return self.writer.closed

    @property
    def gone(self) -> bool:
        """The message was deleted: nothing more is edited."""
        return self.writer.gone

    @property
    def edits(self) -> int:
        """Edits sent (for logs and tests)."""
        return self.writer.edits

    def show(self, state: StatusState) -> None:
        """Show `state` soon; a newer state before then replaces it."""
        self.writer.show(state)

    async def close(self, state: StatusState) -> bool:
        """The final state: sent after whatever is on its way, then nothing more. False when it could not be
        shown (the message was deleted, or Discord refused the edit)."""
        return await self.writer.finish(state)

    # ------------------------------------------------------------------ the StatusSurface the writer edits
    async def edit(self, state: StatusState) -> None:
        async with platform_call("edit the status message"):
            await self._edit(state)

    def shown_as(self, state: StatusState) -> Hashable:
        return state.key()
