"""Privacy in action: whether an agent's utterance may leave it.

`never` members' agents decline before thinking (see `Agent.decline`); `ask` members approve, through the chat
port, every utterance that carries facts from their memory (no answer in time = deny). Excluded channels need no
check here: the store query never returns them.
"""

from __future__ import annotations

from bot import messages
from bot.agents.agent import Agent
from bot.agents.steps import TurnStep
from bot.port import ApprovalDecision, ApprovalRequest, ChatPort, SharePolicy


class SharingGate:
    def __init__(self, port: ChatPort, *, ask_id: int, question: str, requester: str, timeout_s: float) -> None:
        self.port = port
        self.ask_id = ask_id
        self.question = question
        self.requester = requester  # handle; the requester's own agent shares without asking (they asked)
        self.timeout_s = timeout_s

    async def may_share(self, agent: Agent, step: TurnStep, *, conversation_id: int) -> bool:
        """Ask the member when their policy says so; records the decision on the step."""
        if agent.handle == self.requester or not step.shared_facts:
            return True
        if agent.profile.share is not SharePolicy.ASK:
            return True
        request = ApprovalRequest(
            # Stable across a resumed ask, so a re-run asks the same question instead of a new one.
            id=f"ask{self.ask_id}-c{conversation_id}-t{step.index}",
            member_id=agent.profile.platform_id,
            title=messages.approval_title(self.requester),
            body=messages.approval_body(self.question, step.utterance),
            context={"ask_id": str(self.ask_id), "requester": self.requester},
        )
        decision = await self.port.request_approval(request, timeout_s=self.timeout_s)
        step.approval = str(decision)
        return decision is ApprovalDecision.APPROVED
