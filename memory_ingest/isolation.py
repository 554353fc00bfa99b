"""Failure isolation: one channel, thread or member token failing never stops a run or start-up.

    outcome = await guard.run(ObjectKind.THREAD, thread_id, read_the_thread())
    if outcome is Outcome.RATE_LIMITED: ...stop this run's reading; the next run resumes from the saved cursors

What each failure does to the object (its status in `IngestStatusStore`, shown by `askwith ingest` and the admin
page):
- `PlatformObjectGoneError` (thread_not_found, channel_not_found): retired, never read again;
- `PlatformTokenRevokedError` naming a member's token (invalid_auth, token_revoked): that token is disabled and
  `on_token_disabled(member_id)` tells the member (once); the bot's own token failing is not one object's problem
  and propagates;
- `PlatformRateLimitedError`: backs off for at least the platform's Retry-After;
- anything else (not_in_channel, missing_scope, a bug): backs off exponentially, the error kept as `last_error`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from enum import StrEnum
from typing import Any

from bot.errors import (
    AskwithError,
    PlatformObjectGoneError,
    PlatformRateLimitedError,
    PlatformTokenRevokedError,
)
from bot.store.ingest_status import IngestStatusStore, ObjectKind


logger = logging.getLogger(__name__)

TokenDisabled = Callable[[str, str], Awaitable[None]]  # (member platform id, reason)


class Outcome(StrEnum):
    OK = "ok"
    FAILED = "failed"
    GONE = "gone"
    TOKEN_DISABLED = "token_disabled"
    RATE_LIMITED = "rate_limited"


class FailureGuard:
    def __init__(
        self, status: IngestStatusStore, workspace_id: int, *, on_token_disabled: TokenDisabled | None = None
    ) -> None:
        self.status = status
        self.workspace_id = workspace_id
        self.on_token_disabled = on_token_disabled

    async def run(self, kind: ObjectKind, object_id: str, work: Coroutine[Any, Any, Any]) -> Outcome:
        """Await `work` (reading one object), record how it went, and never raise for that object's failure."""
        ws = self.workspace_id
        try:
            await work
        except PlatformObjectGoneError as exc:
            logger.info("Retiring %s %s: %s", kind.value, object_id, exc)
            await self.status.retire(ws, kind, object_id, str(exc))
            return Outcome.GONE
        except PlatformTokenRevokedError as exc:
            if exc.token_owner is None:
                raise  # the bot's own token: the whole workspace is unreachable
            await self.disable_token(exc.token_owner, str(exc))
            return Outcome.TOKEN_DISABLED
        except PlatformRateLimitedError as exc:
            state = await self.status.failed(ws, kind, object_id, str(exc), retry_after=exc.retry_after)
            logger.warning("Rate limited on %s %s: waiting until %s", kind.value, object_id, state.retry_at)
            return Outcome.RATE_LIMITED
        except Exception as exc:  # noqa: BLE001 - one object's failure, whatever it is, must not stop the others
            state = await self.status.failed(ws, kind, object_id, f"{type(exc).__name__}: {exc}")
            logger.warning(
                "Reading %s %s failed (%d in a row, next try %s): %s",
                kind.value,
                object_id,
                state.failures,
                state.retry_at,
                exc,
                exc_info=not isinstance(exc, AskwithError),  # a traceback only for what askwith did not expect
            )
            return Outcome.FAILED
        await self.status.ok(ws, kind, object_id)
        return Outcome.OK

    async def disable_token(self, member_id: str, reason: str) -> None:
        """Never use this member's token again (until they connect anew), and tell them once."""
        first = await self.status.disable(self.workspace_id, ObjectKind.MEMBER_TOKEN, member_id, reason)
        logger.warning("Disabled the token of member %s: %s", member_id, reason)
        if first and self.on_token_disabled is not None:
            try:
                await self.on_token_disabled(member_id, reason)
            except Exception:  # noqa: BLE001 - telling the member is best effort
                logger.exception("Could not tell member %s their token was disabled", member_id)
