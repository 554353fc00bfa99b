"""A member's Accept / Decline of an agreed trade, stored like an ask's approvals so any process may hear the click.

The prompt is posted by the process running the negotiation, but a click may reach any process (another `serve`
behind the same address, one restarted since): each records it in the `approval` table
(`bot.consent.pending.decide_click`) and the negotiation polls that table while its own prompt waits, so the first
decision anywhere counts.

    confirmations = TradeConfirmations(db, port, timeout_s=86400)
    decision = await confirmations.decide(request)         # the click, wherever it was heard, or TIMEOUT
    await confirmations.close(7, ("alice", "bob"))         # decisions now in the negotiation's row: rows go

A trade's rows have no ask (`ask_id` is NULL); their id names the negotiation (`negotiation-<id>-<handle>`), which is
how a workspace's forget finds them (`bot.asks.forget`).
"""

from __future__ import annotations

import asyncio

from sqlalchemy import delete

from bot.asks.models import Approval
from bot.consent.pending import PENDING, ApprovalStore
from bot.platform.port import ApprovalDecision, ApprovalRequest, ChatPort
from bot.store.db import Database


PREFIX = "negotiation-"  # `bot.asks.forget` finds a workspace's trade approvals by it
PROMPT_GRACE_S = 2.0  # the stored deadline ends this much after the prompt's, so the prompt closes itself first


def approval_id(negotiation_id: int, handle: str) -> str:
    return f"{PREFIX}{negotiation_id}-{handle}"


class TradeConfirmations:
    def __init__(self, db: Database, port: ChatPort, *, timeout_s: float, poll_s: float = 1.0) -> None:
        self.db = db
        self.port = port
        self.store = ApprovalStore(db)
        self.timeout_s = timeout_s
        self.poll_s = poll_s  # how often the negotiation looks for a click stored by another process

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        """The member's decision: a click on this process's prompt or one stored by any process, whichever comes
        first; the stored decision is final (a late click changes nothing)."""
        row = await self.store.open(request, ask_id=None, timeout_s=self.timeout_s + PROMPT_GRACE_S)
        if row.status != PENDING:
            return ApprovalDecision(row.status)
        prompt = asyncio.create_task(self.port.request_approval(request, timeout_s=self.timeout_s))
        stored = asyncio.create_task(self.store.wait(request.id, poll_s=self.poll_s))
        try:
            await asyncio.wait({prompt, stored}, return_when=asyncio.FIRST_COMPLETED)
            if prompt.done():
                # Recorded conditionally: a click another process stored just before still wins.
                await self.store.decide(request.id, prompt.result())
            return await self.store.wait(request.id, poll_s=self.poll_s)
        finally:
            for task in (prompt, stored):
                task.cancel()
            await asyncio.gather(prompt, stored, return_exceptions=True)

    async def close(self, negotiation_id: int, handles: tuple[str, ...]) -> None:
        """Drop the trade's approval rows once its outcome is recorded in the negotiation's own row."""
        ids = [approval_id(negotiation_id, handle) for handle in handles]
        async with self.db.session() as session, session.begin():
            await session.execute(delete(Approval).where(Approval.ask_id.is_(None), Approval.id.in_(ids)))
