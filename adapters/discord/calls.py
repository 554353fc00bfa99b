"""Calling Discord's HTTP API: its refusals become askwith's `ChatPlatformError`, naming the call, the HTTP status
and Discord's JSON error code, of the kind ingestion isolates: a vanished object (404: Unknown Channel 10003,
Unknown Message 10008, ...) is `PlatformObjectGoneError` and gets retired; Missing Access / Permissions (403:
50001, 50013) is `PlatformAccessError`; a refused bot token (401) is `PlatformTokenRevokedError`. discord.py waits
out 429s itself, honouring `retry_after`, up to `MAX_INLINE_RATE_LIMIT_S`; a longer wait becomes
`PlatformRateLimitedError`, so that one object backs off instead of holding up the run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import discord

from adapters.discord import texts
from bot.errors import (
    ChatPlatformError,
    PlatformAccessError,
    PlatformObjectGoneError,
    PlatformRateLimitedError,
    PlatformTokenRevokedError,
)


INVALID_WEBHOOK_TOKEN = 50027
MAX_INLINE_RATE_LIMIT_S = 60.0  # discord.py accepts no less than 30
_BY_STATUS: dict[int, type[ChatPlatformError]] = {
    404: PlatformObjectGoneError,
    403: PlatformAccessError,
    401: PlatformTokenRevokedError,
}


@asynccontextmanager
async def platform_call(doing: str) -> AsyncIterator[None]:
    """Discord's refusals become one readable ChatPlatformError (discord.py has already retried 429s and 5xx)."""
    try:
        yield
    except discord.HTTPException as exc:
        raise refused(doing, exc) from exc
    except discord.RateLimited as exc:
        raise PlatformRateLimitedError(f"to {doing}", "HTTP 429", retry_after=exc.retry_after) from exc


def refused(doing: str, exc: discord.HTTPException) -> ChatPlatformError:
    kind = _BY_STATUS.get(exc.status, ChatPlatformError)
    return kind(f"to {doing}", texts.refusal(exc.status, exc.code, exc.text))


def interaction_gone(exc: discord.HTTPException) -> bool:
    """An interaction's token is over: 401 Invalid Webhook Token (50027) once its 15 minutes are up, 404 Unknown
    Webhook / Unknown Interaction (10015, 10062) when Discord has forgotten it."""
    return exc.status == 404 or (exc.status == 401 and exc.code in (0, INVALID_WEBHOOK_TOKEN))
