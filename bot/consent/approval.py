"""Asking a member: the approval an `ask` member gives or refuses for one exact text their agent would pass on.

Only the outbox (`bot.consent.outbox`) calls this, after the share screen: the member sees the question, the exact
text once, where it comes from (without internal ids), who will see it and until when they can answer; no answer in
time = not shared. The decision is stored (`bot.consent.pending.ApprovalStore`) so any process may hear the click.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import UTC, datetime, timedelta

from bot.agents.roster import MemberProfile
from bot.consent.card import plain_text
from bot.consent.card_facts import CardFacts, build_card
from bot.consent.outgoing import Outgoing
from bot.consent.pending import PENDING, ApprovalStore
from bot.consent.prompt_limits import ApprovalLimits
from bot.consent.screen import Shareable
from bot.platform.port import ApprovalDecision, ApprovalRequest, ChatPort


# While an ask waits on a member, it is parked: the caller's context frees the worker slot and marks the ask waiting.
Park = Callable[[str], AbstractAsyncContextManager[object]]  # given the platform id of the member it waits on


PROMPT_GRACE_S = 2.0  # how much later the stored deadline ends than the prompt's own


Approval = ApprovalDecision  # what `SharingGate.ask` returns
# One letter per kind of prompt in an approval's id: a question a member's agent writes and another member's words
# it carries may be the same text for the same people, yet they are two members' decisions.
KIND_KEYS = {"turn": "t", "statement": "s", "recruit": "r", "relay": "w"}


class SharingGate:
    def __init__(
        self,
        port: ChatPort,
        *,
        ask_id: int,
        question: str,
        requester: str,
        timeout_s: float,
        approvals: ApprovalStore | None = None,
        park: Park | None = None,
        poll_s: float = 1.0,
        limits: ApprovalLimits | None = None,
        facts: CardFacts | None = None,
        zone: str = "UTC",
    ) -> None:
        self.port = port
        self.ask_id = ask_id
        self.question = question
        self.requester = requester  # handle
        self.timeout_s = timeout_s
        self.approvals = approvals  # None: the port's own wait is the only record (CLI, tests without a worker)
        self.park = park or nullcontext
        self.poll_s = poll_s  # how often a parked ask looks for a decision stored by another process
        self.limits = limits  # how often a requester's asks may prompt one member (None: unlimited)
        self.facts = facts  # display names and message places for the card (None: handles, as the lines say)
        self.zone = zone  # the workspace's time zone: the card's deadline and sources for a member without their own

    async def ask(
        self, member: MemberProfile, step: Shareable, outgoing: Outgoing, *, audience: list[str], kind: str,
        conversation_id: int,
    ) -> ApprovalDecision:  # fmt: skip
        """Ask `member` to approve `outgoing` exactly as it would leave, naming its audience and the deadline."""
        deadline = datetime.now(UTC) + timedelta(seconds=self.timeout_s)
        text = outgoing.text()
        # The card shows exactly `text` (ids aside) and only `member`'s own memory lines it rests on.
        card = await build_card(
            self.port, self.facts, member, question=self.question, requester=self.requester, text=text,
            lines=outgoing.cited_lines, audience=audience, deadline=deadline, kind=kind, zone=self.zone,
        )  # fmt: skip
        # What the member decides on: these words, to these people (and, for words an agent carries from several
        # members, which of them decides).
        decided = "\n".join([text, *sorted(audience), *([member.platform_id] if kind == "relay" else [])])
        request = ApprovalRequest(
            # Stable across a resumed ask, so a re-run asks the same question instead of a new one; the digest of
            # the text and its audience makes a re-run that would share something else, or with someone else, ask
            # again instead of reusing the decision.
            id=f"ask{self.ask_id}-c{conversation_id}-{KIND_KEYS.get(kind, kind[0])}{step.approval_key}-"
            f"{hashlib.sha256(decided.encode()).hexdigest()[:12]}",
            member_id=member.platform_id,
            title=card.title,
            body=plain_text(card),
            context={
                "ask_id": str(self.ask_id), "requester": self.requester, "question": self.question, "text": text,
                "audience": ", ".join(audience), "deadline": deadline.isoformat(timespec="seconds"),
            },
            card=card,
        )  # fmt: skip
        return await self._decision(request)

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
