"""Pending approvals: an ask waits on a decision that a button click (Slack, Discord, local UI) delivers later.

    registry = ApprovalRegistry()
    decision = await registry.wait("appr-1", timeout_s=600)   # in the ask
    registry.resolve("appr-1", ApprovalDecision.APPROVED)       # in the button's handler

A decision that arrives before anyone waits is kept, so a click racing the prompt is never lost. Waiting again on
an id already decided returns that decision (a resumed ask re-asks with the same stable id). The registry is the
platform's in-process view of its prompts; `ApprovalStore` (below) is the record asks rely on: decisions in the
database, so an ask waiting on one holds no worker slot, and a restart or another worker loses nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from bot.asks.approval_rows import Approval, approval, insert_approval, settle_approval
from bot.platform.port import ApprovalDecision, ApprovalRequest
from bot.store.db import Database, as_utc


PENDING = "pending"


@dataclass(frozen=True)
class PendingApproval:
    request: ApprovalRequest
    prompt_ref: str  # where the prompt was posted (platform-specific), so it can be updated once decided


class ApprovalRegistry:
    def __init__(self) -> None:
        self._futures: dict[str, asyncio.Future[ApprovalDecision]] = {}
        self._pending: dict[str, PendingApproval] = {}

    def _future(self, approval_id: str) -> asyncio.Future[ApprovalDecision]:
        future = self._futures.get(approval_id)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._futures[approval_id] = future
        return future

    def track(self, pending: PendingApproval) -> None:
        """Remember who may decide `pending.request.id` and where its prompt is."""
        self._pending[pending.request.id] = pending

    def pending(self, approval_id: str) -> PendingApproval | None:
        return self._pending.get(approval_id)

    def take(self, approval_id: str) -> PendingApproval | None:
        """Stop tracking a prompt (it was answered or expired) and return it."""
        return self._pending.pop(approval_id, None)

    def decision(self, approval_id: str) -> ApprovalDecision | None:
        future = self._futures.get(approval_id)
        return future.result() if future is not None and future.done() else None

    async def wait(self, approval_id: str, *, timeout_s: float) -> ApprovalDecision:
        """The decision, or TIMEOUT; a timeout is final, so a late click cannot change what the ask already did."""
        future = self._future(approval_id)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except TimeoutError:
            self.resolve(approval_id, ApprovalDecision.TIMEOUT)
            return future.result()

    def resolve(self, approval_id: str, decision: ApprovalDecision) -> bool:
        """Deliver a decision; False when this approval was already decided (or had expired)."""
        future = self._future(approval_id)
        if future.done():
            return False
        future.set_result(decision)
        return True


# ---------------------------------------------------------------------- stored approvals (asks)
class ApprovalStore:
    """Approvals of an ask's shares, in the database: the decision survives a restart and reaches whichever worker
    runs the ask, whichever process heard the click.

        store = ApprovalStore(db)
        row = await store.open(request, ask_id=7, timeout_s=600)         # once; a resumed ask finds the same row
        await store.decide(row.id, ApprovalDecision.APPROVED, member_id="U1")   # the click, anywhere
        decision = await store.wait(row.id, poll_s=1.0)                  # the decision, or TIMEOUT at the deadline

    A decision is final: the first of the click and the deadline wins, and a late click changes nothing.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    async def open(self, request: ApprovalRequest, *, ask_id: int | None, timeout_s: float) -> Approval:
        now = datetime.now(UTC)
        row = {
            "id": request.id, "ask_id": ask_id, "member_id": request.member_id, "status": PENDING, "created_at": now,
            "deadline_at": now + timedelta(seconds=timeout_s),
        }  # fmt: skip
        await insert_approval(self.db, row)
        return await self.get(request.id)  # type: ignore[return-value]  # inserted or already there

    async def get(self, approval_id: str) -> Approval | None:
        return await approval(self.db, approval_id)

    async def decide(self, approval_id: str, decision: ApprovalDecision, *, member_id: str | None = None) -> bool:
        """Record a decision; False when it was already decided (or expired) or `member_id` is not the one asked."""
        return await settle_approval(
            self.db, approval_id, from_status=PENDING, to_status=decision.value, member_id=member_id
        )

    async def wait(self, approval_id: str, *, poll_s: float) -> ApprovalDecision:
        """Poll until decided; at the deadline, TIMEOUT (unless a click got in first)."""
        while True:
            row = await self.get(approval_id)
            if row is None:
                raise KeyError(approval_id)
            if row.status != PENDING:
                return ApprovalDecision(row.status)
            left = (as_utc(row.deadline_at) - datetime.now(UTC)).total_seconds()
            if left <= 0:
                await self.decide(approval_id, ApprovalDecision.TIMEOUT)
                continue
            await asyncio.sleep(min(poll_s, left))


# ---------------------------------------------------------------------- a click, in whichever process hears it
class Click(StrEnum):
    DECIDED = "decided"
    NOT_YOURS = "not_yours"  # someone other than the member asked clicked
    NOT_PENDING = "not_pending"  # already decided, expired, or unknown


@dataclass(frozen=True)
class ClickResult:
    outcome: Click
    pending: PendingApproval | None = None  # the prompt, when this process posted it (None: another process did)


async def decide_click(
    store: ApprovalStore, registry: ApprovalRegistry, approval_id: str, decision: ApprovalDecision, *, member_id: str
) -> ClickResult:
    """Record a button click. A stored approval (an ask's share, or a trade's) is decided in the database first, so
    the ask or trade gets it wherever it waits: in this process, in another worker, or after a restart. A prompt this
    process holds is resolved too, at once."""
    pending = registry.pending(approval_id)
    if pending is not None and pending.request.member_id != member_id:
        return ClickResult(Click.NOT_YOURS, pending)
    row = await store.get(approval_id)
    if row is not None:
        if row.member_id != member_id:
            return ClickResult(Click.NOT_YOURS, pending)
        if not await store.decide(approval_id, decision, member_id=member_id):
            return ClickResult(Click.NOT_PENDING, pending)
    elif pending is None:
        return ClickResult(Click.NOT_PENDING)
    if pending is not None and not registry.resolve(approval_id, decision) and row is None:
        return ClickResult(Click.NOT_PENDING, pending)  # a prompt of this process only, decided already
    return ClickResult(Click.DECIDED, pending)
