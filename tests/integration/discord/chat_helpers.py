"""Helpers for the in-chat ask tests: where a status message is, how it was edited, what its final state shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.platform.port import ChatMessage
from tests.fakes.discord_routes import ApiCall
from tests.integration.discord.conftest import DiscordHarness


FINAL_MARK = "transcripts show"


@dataclass
class StatusReport:
    message: ChatMessage  # the status message, as it stands now (its final state: the answer)
    edits: list[ApiCall]  # every edit of it (channel PATCH or interaction webhook PATCH), in order
    shown: str  # content + embeds as text
    embeds: list[dict[str, Any]]
    buttons: list[dict[str, Any]]


def buttons_of(bot: DiscordHarness, message_id: str) -> list[dict[str, Any]]:
    return [b for row in bot.api.components.get(message_id, []) for b in row.get("components", [])]


def bot_posts(bot: DiscordHarness, channel_or_thread: str) -> list[ChatMessage]:
    return [m for m in bot.api.messages_in(channel_or_thread) if m.sender_id == bot.world.bot_id]


async def answered(
    bot: DiscordHarness, where: str, *, token: str | None = None, timeout: float = 20.0
) -> StatusReport:
    """Wait until the bot's status message in `where` (a channel, thread or DM id) shows the final answer."""

    def done() -> ChatMessage | None:
        for message in bot_posts(bot, where):
            if FINAL_MARK in message.text and bot.api.embeds.get(message.id):
                return message
        return None

    message = await bot.api.wait_for(done, timeout=timeout)
    edits = bot.api.requests("PATCH", rf"/channels/\d+/messages/{message.id}")
    if token is not None:
        edits = sorted(edits + bot.api.requests("PATCH", rf"/webhooks/\d+/{token}/messages/@original"), key=_at)
    return StatusReport(
        message, edits, bot.api.shown(message.id), bot.api.embeds[message.id], buttons_of(bot, message.id)
    )


def _at(call: ApiCall) -> float:
    return call.at


def edit_gaps(edits: list[ApiCall]) -> list[float]:
    return [later.at - earlier.at for earlier, later in zip(edits, edits[1:], strict=False)]
