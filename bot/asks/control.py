"""Cancelling an ask: only its requester or an admin may; nothing more is shared by its agents afterwards.

    result = await service.cancel(ask_id, by="alice")   # CancelResult.CANCELLED | STOPPING | FINISHED

The cancel is recorded on the ask row (`cancel_requested_at`, `cancelled_by`), so it reaches the worker wherever it
runs: in this process the ask stops at once; a worker in another process notices at its next heartbeat
(ASKWITH_WORKER_HEARTBEAT_SECONDS). The stopped ask drops its pending writes, posts one final text saying it was
cancelled, and ends with status `cancelled`. A queued ask is claimed and ended here.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy import update

from bot.agents.progress import Stage
from bot.asks import models
from bot.asks.access import is_admin
from bot.asks.delivery import Delivery
from bot.asks.record import AskRecorder
from bot.asks.requests import AskOutcome
from bot.consent.pending import PENDING
from bot.errors import AskNotAllowedError, AskNotFoundError, UnknownMemberError
from bot.platform.port import ApprovalDecision
from bot.store.db import Database
from bot.texts import progress_texts


if TYPE_CHECKING:
    from bot.asks.progress import ProgressTracker
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
        raise AskNotAllowedError(progress_texts.cancel_not_allowed()) from exc
    if member.handle != ask.requester and not is_admin(service.settings, member):
        raise AskNotAllowedError(progress_texts.cancel_not_allowed())
    if ask.status in models.FINISHED or ask.final_text is not None:
        return CancelResult.FINISHED
    async with service.db.session() as session, session.begin():
        recorded = await session.execute(
            update(models.Ask)
            .where(models.Ask.id == ask_id, models.Ask.final_text.is_(None))  # not once its end is saved
            .where(models.Ask.cancel_requested_at.is_(None))
            .values(cancel_requested_at=datetime.now(UTC), cancelled_by=member.handle)
        )
    if recorded.rowcount != 1 and (await service.load(ask_id)).cancel_requested_at is None:
        return CancelResult.FINISHED  # its end was saved a moment ago: it is being posted
    if service.stop_here(ask_id):
        return await _wait_until_finished(service, ask_id)
    if await service.claim(ask_id):  # queued (or its worker died): end it here, without running it
        await service.process(ask_id)
        return CancelResult.CANCELLED
    return CancelResult.STOPPING


async def _wait_until_finished(service: AskService, ask_id: int) -> CancelResult:
    """Wait for the ask stopped in this process to reach its final stage (published by its tracker)."""
    ended = asyncio.Event()
    unsubscribe = service.progress.listen(ask_id, lambda p: p.final and ended.set())
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(IN_PROCESS_WAIT_S):
                if (await service.load(ask_id)).status not in models.FINISHED:
                    await ended.wait()
    finally:
        unsubscribe()
    status = (await service.load(ask_id)).status
    if status not in models.FINISHED:
        return CancelResult.STOPPING
    return CancelResult.CANCELLED if status == models.AskStatus.CANCELLED else CancelResult.FINISHED


async def end_cancelled(
    service: AskService, ask_id: int, recorder: AskRecorder, tracker: ProgressTracker
) -> AskOutcome:
    """A cancelled ask: drop its pending writes, compose and post its one final text, mark it cancelled."""
    started = time.perf_counter()
    tracker.stop()
    await recorder.abort()
    ask = await service.load(ask_id)
    if ask.final_text is None:
        by = (await service.roster.profile(ask.cancelled_by or ask.requester)).display_name
        text = progress_texts.final_cancelled(ask_id, by, link=service.transcript_url(ask))
        await recorder.save_outcome(None, answer=None, failure=None, final_text=text, wall_s=0.0, cancelling=True)
        ask = await service.load(ask_id)
    await close_approvals(service.db, ask_id)
    requester = await service.roster.profile(ask.requester)
    delivery = Delivery(service.db, service.port, recorder, view_of=service.final_view)
    platform_ids = {h: (await service.roster.profile(h)).platform_id for h in await service.members_in(ask)}
    await delivery.notices(ask, requester.display_name, platform_ids)  # what was shared before the cancel
    await delivery.final_post(ask, requester.platform_id, status=models.AskStatus.CANCELLED.value)
    await tracker.finish(Stage.CANCELLED)
    await service.settle_record(ask_id)
    cancelled = models.AskStatus.CANCELLED.value
    return AskOutcome(ask_id, cancelled, None, None, ask.final_text or "", None, time.perf_counter() - started)


async def close_approvals(db: Database, ask_id: int) -> int:
    """Close the ask's approvals still pending (as expired: a late click then changes nothing); their count."""
    async with db.session() as session, session.begin():
        closed = await session.execute(
            update(models.Approval)
            .where(models.Approval.ask_id == ask_id, models.Approval.status == PENDING)
            .values(status=ApprovalDecision.TIMEOUT.value, decided_at=datetime.now(UTC))
        )
    return closed.rowcount
