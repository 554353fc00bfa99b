"""One ask: the requester's agent talks 1:1 with each colleague's agent, all conversations at once, sharing a
blackboard; as each talk ends, its colleague's agent states its side over its own notebook (screened like a turn);
then one consensus combines the statements with the requester's plans and notebooks. A resumed ask continues each
conversation from its last saved turn, with its plans, notebooks and the blackboard restored."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot.agents.consensus import ConsensusOutcome, reach_consensus
from bot.agents.context import AskContext
from bot.agents.conversation import Conversation, ConversationResult
from bot.agents.plan import Plan
from bot.agents.progress import Stage
from bot.agents.statements import state_side
from bot.agents.steps import TaskStep, TurnStep
from bot.errors import LLMConfigurationError, LLMOutputError, LLMUnavailableError
from bot.texts import failure_texts


@dataclass
class SavedConversation:
    """A top-level conversation as the record holds it (for resuming)."""

    id: int
    colleague: str
    turns: list[TurnStep] = field(default_factory=list)
    stop_reason: str | None = None  # set when it had finished

    def plan_of(self, handle: str) -> Plan | None:
        last = next((t for t in reversed(self.turns) if t.agent == handle and t.plan is not None), None)
        return last.plan.copy() if last and last.plan else None


@dataclass
class AskResult:
    conversations: list[ConversationResult]
    consensus: ConsensusOutcome | None
    failure: str | None = None  # user-readable reason when there is no answer

    @property
    def answer(self) -> str | None:
        return self.consensus.answer if self.consensus and self.failure is None else None


async def run_ask(
    ctx: AskContext, colleagues: list[str], *, saved: dict[str, SavedConversation] | None = None
) -> AskResult:
    saved = {} if saved is None else saved
    ctx.blackboard.asked = tuple(colleagues)
    for conversation in saved.values():
        for step in conversation.turns:
            ctx.blackboard.restore(step.published)
    conversations = list(await asyncio.gather(*(_converse(ctx, c, saved.get(c)) for c in colleagues)))
    if ctx.refusal is not None:  # no call can succeed: not even consensus is tried
        return AskResult(conversations, None, failure_texts.failure_llm_misconfigured(ctx.refusal.reason))
    ctx.report(Stage.AGREEING)
    try:
        consensus = await reach_consensus(ctx, conversations)
    except LLMConfigurationError as exc:
        return AskResult(conversations, None, failure_texts.failure_llm_misconfigured(exc.reason))
    except LLMUnavailableError:
        return AskResult(conversations, None, failure_texts.failure_llm_unavailable())
    except LLMOutputError:
        return AskResult(conversations, None, failure_texts.failure_llm_output())
    return AskResult(conversations, consensus, _failure(conversations, consensus))


async def _converse(ctx: AskContext, colleague: str, saved: SavedConversation | None) -> ConversationResult:
    asker = await ctx.agent(ctx.requester, plan=saved.plan_of(ctx.requester) if saved else None)
    partner = await ctx.agent(colleague, plan=saved.plan_of(colleague) if saved else None)
    participants = [asker.handle, partner.handle]
    task = TaskStep(ctx.question, asker.handle, participants)
    if saved is not None and saved.stop_reason:
        asker.restore(saved.turns)
        partner.restore(saved.turns)
        result = ConversationResult(saved.id, task, [asker, partner], saved.turns, saved.stop_reason)
        await state_side(ctx, result)
        return result
    conversation_id = (
        saved.id
        if saved
        else await ctx.recorder.open_conversation(
            parent_id=None, parent_turn=None, depth=0, participants=participants, question=ctx.question
        )
    )
    conversation = Conversation(
        ctx,
        conversation_id=conversation_id,
        agents=[asker, partner],
        task=task,
        ancestors=tuple(participants),
        turns=saved.turns if saved else None,
        branch=colleague,
    )
    result = await conversation.run()
    await state_side(ctx, result)  # the colleague's side of the consensus, while other talks may still run
    return result


def _failure(conversations: list[ConversationResult], consensus: ConsensusOutcome) -> str | None:
    if consensus.answerable:
        return None
    if consensus.answer:
        return None  # the model says it cannot fully answer, in words the requester should read
    reasons = {c.stop_reason for c in conversations}
    if "llm_unavailable" in reasons:
        return failure_texts.failure_llm_unavailable()
    if "llm_output" in reasons:
        return failure_texts.failure_llm_output()
    return failure_texts.failure_unanswerable()
