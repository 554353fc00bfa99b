"""Cancelling an ask: only its requester or an admin may; nothing more is shared by its agents afterwards.

    result = await service.cancel(ask_id, by="alice")   # CancelResult.CANCELLED | STOPPING | FINISHED

The cancel is recorded on the ask row (`cancel_requested_at`, `cancelled_by`), so it reaches the worker wherever it
runs: in this process the ask stops at once; a worker in another process notices at its next heartbeat
(ASKWITH_WORKER_HEARTBEAT_SECONDS). The stopped ask drops its pending writes, posts one final text saying it was
cancelled, and ends with status `cancelled`. A queued ask is claimed and ended here.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy import update

from bot import messages
from bot.asks import models
from bot.asks.access import is_admin
from bot.errors import AskNotAllowedError, AskNotFoundError, UnknownMemberError


if TYPE_CHECKING:
    from bot.asks.service import AskService

IN_PROCESS_WAIT_S = 30.0  # how long `cancel` waits for an ask stopped in this process to post its final text


class CancelResult(StrEnum):
    CANCELLED = "cancelled"  # stopped, its final post made
    STOPPING = "stopping"  # recorded; the worker running it (another process) stops at its next heartbeat
    FINISHED = "finished"  # it had already finished: nothing to cancel


async def cancel_ask(service: AskService, ask_id: int, *, by: str) -> CancelResult:
    ask = await service.load(ask_id)
    if ask.workspace_id != service.workspace_id:
        raise AskNotFoundError(ask_id)
    try:
        member = await service.roster.profile(by)
    except UnknownMemberError as exc:
        raise AskNotAllowedError(messages.cancel_not_allowed()) from exc
    if member.handle != ask.requester and not is_admin(service.settings, member):
        raise AskNotAllowedError(messages.cancel_not_allowed())
    if ask.status in models.FINISHED or ask.final_text is not None:
        return CancelResult.FINISHED
    async with service.db.session() as session, session.begin():
        await session.execute(
            update(models.Ask)
            .where(models.Ask.id == ask_id, models.Ask.cancel_requested_at.is_(None))
            .values(cancel_requested_at=datetime.now(UTC), cancelled_by=member.handle)
        )
    if service.stop_here(ask_id):
        return await _wait_until_finished(service, ask_id)
    if await service.claim(ask_id):  # queued (or its worker died): end it here, without running it
        await service.process(ask_id)
        return CancelResult.CANCELLED
    return CancelResult.STOPPING


async def _wait_until_finished(service: AskService, ask_id: int) -> CancelResult:
    deadline = asyncio.get_running_loop().time() + IN_PROCESS_WAIT_S
    while asyncio.get_running_loop().time() < deadline:
        ask = await service.load(ask_id)
        if ask.status in models.FINISHED:
            return CancelResult.CANCELLED if ask.status == models.AskStatus.CANCELLED else CancelResult.FINISHED
        await asyncio.sleep(0.02)
    return CancelResult.STOPPING
