"""Pending approvals: an ask waits on a decision that a button click (Slack, Discord, local UI) delivers later.

    registry = ApprovalRegistry()
    decision = await registry.wait("appr-1", timeout_s=600)   # in the ask
    registry.resolve("appr-1", ApprovalDecision.APPROVED)       # in the button's handler

A decision that arrives before anyone waits is kept, so a click racing the prompt is never lost. Waiting again on
an id already decided returns that decision (a resumed ask re-asks with the same stable id). Held in memory: a
prompt answered after the process restarted is reported to the member as no longer pending.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.port import ApprovalDecision, ApprovalRequest


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
