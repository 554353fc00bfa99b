"""Privacy in action: whether what an agent's turn produced may leave it.

`never` members' agents decline before thinking (see `Agent.decline`). Every other turn goes through the share
screen first (`bot.agents.sharing`: facts tied to the question, verbatim memory only as cited evidence, a per-ask
cap); then `ask` members approve, through the chat port, every turn that carries facts from their memory, seeing
the utterance AND the facts, answer and cited lines it would pass on (no answer in time = deny). The side's closing
statement (`bot.agents.statements`) is screened and approved the same way. Excluded channels need no check here:
the store query never returns them.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext

from bot import messages
from bot.agents.agent import Agent
from bot.agents.sharing import Outgoing, Shareable, ShareScreen
from bot.agents.steps import StatementStep, TurnStep
from bot.approval_limits import ApprovalLimits
from bot.approvals import PENDING, ApprovalStore
from bot.port import ApprovalDecision, ApprovalRequest, ChatPort, SharePolicy


# While an ask waits on a member, it is parked: the caller's context frees the worker slot and marks the ask waiting.
Park = Callable[[str], AbstractAsyncContextManager[object]]  # given the platform id of the member it waits on


PROMPT_GRACE_S = 2.0  # how much later the stored deadline ends than the prompt's own


class SharingGate:
    def __init__(
        self,
        port: ChatPort,
        *,
        ask_id: int,
        question: str,
        requester: str,
        timeout_s: float,
        quote_cap: int = 2000,
        approvals: ApprovalStore | None = None,
        park: Park | None = None,
        poll_s: float = 1.0,
        limits: ApprovalLimits | None = None,
    ) -> None:
        self.port = port
        self.ask_id = ask_id
        self.question = question
        self.requester = requester  # handle; the requester's own agent shares without asking (they asked)
        self.timeout_s = timeout_s
        self.screen = ShareScreen(cap=quote_cap)
        self.approvals = approvals  # None: the port's own wait is the only record (CLI, tests without a worker)
        self.park = park or nullcontext
        self.poll_s = poll_s  # how often a parked ask looks for a decision stored by another process
        self.limits = limits  # how often a requester's asks may prompt one member (None: unlimited)

    async def share(
        self, agent: Agent, step: Shareable, turns: list[TurnStep], *, question: str, conversation_id: int
    ) -> bool:
        """Screen the turn in place; False when the member did not approve (nothing of it may leave)."""
        outgoing = self.screen.turn(agent, step, turns, question=question, conversation_id=conversation_id)
        return await self.may_share(agent, step, outgoing, conversation_id=conversation_id)

    async def may_share(self, agent: Agent, step: Shareable, outgoing: Outgoing, *, conversation_id: int) -> bool:
        """Ask the member when their policy says so; records the decision on the step."""
        if agent.handle == self.requester or not step.shared_facts:
            return True
        if agent.profile.share is not SharePolicy.ASK:
            return True
        facts = [(f.need, f.value, f.source) for f in outgoing.facts]
        body = messages.approval_body(
            self.question, outgoing.utterance, facts=facts, answer=outgoing.answer, cited=outgoing.cited_lines,
            closing=isinstance(step, StatementStep),
        )  # fmt: skip
        request = ApprovalRequest(
            # Stable across a resumed ask, so a re-run asks the same question instead of a new one; the content's
            # digest makes a re-run that would share something else ask again instead of reusing the decision.
            id=f"ask{self.ask_id}-c{conversation_id}-{step.approval_key}-{hashlib.sha256(body.encode()).hexdigest()[:12]}",
            member_id=agent.profile.platform_id,
            title=messages.approval_title(self.requester),
            body=body,
            context={"ask_id": str(self.ask_id), "requester": self.requester},
        )
        decision = await self._decision(request)
        step.approval = str(decision)
        return decision is ApprovalDecision.APPROVED

    async def _decision(self, request: ApprovalRequest) -> ApprovalDecision:
        if self.limits is not None and not self.limits.admit(self.requester, request.member_id, request.id):
            return ApprovalDecision.UNREACHABLE  # too many prompts to this member for this requester: not asked
        if self.approvals is None:
            return await self.port.request_approval(request, timeout_s=self.timeout_s)
        # The stored deadline is the backstop for a prompt no process holds any more; it ends a moment after the
        # prompt's own, so the prompt held here times out first and closes itself ("no answer in time").
        stored_timeout_s = self.timeout_s + PROMPT_GRACE_S
        row = await self.approvals.open(request, ask_id=self.ask_id, timeout_s=stored_timeout_s)
        if row.status != PENDING:  # decided while this ask was parked elsewhere, or before a restart
            return ApprovalDecision(row.status)
        async with self.park(request.member_id):
            return await self._first_decision(request, self.approvals)

    async def _first_decision(self, request: ApprovalRequest, store: ApprovalStore) -> ApprovalDecision:
        """The port's prompt (a click in this process) or a decision stored by any process, whichever comes first;
        the stored decision is the final one."""
        prompt = asyncio.create_task(self.port.request_approval(request, timeout_s=self.timeout_s))
        stored = asyncio.create_task(store.wait(request.id, poll_s=self.poll_s))
        try:
            await asyncio.wait({prompt, stored}, return_when=asyncio.FIRST_COMPLETED)
            if prompt.done():
                # A platform error propagates, as before; the port's own time-out is the same deadline, so it is
                # recorded too (a click stored by another process just before it still wins: decide is conditional).
                await store.decide(request.id, prompt.result())
            return await store.wait(request.id, poll_s=self.poll_s)
        finally:
            for task in (prompt, stored):
                task.cancel()
            await asyncio.gather(prompt, stored, return_exceptions=True)
