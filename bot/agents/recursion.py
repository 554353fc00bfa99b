"""Recursive communication: an agent brings in a third member's agent when nobody present can fill an unknown.

"Hold on, I can ask Carol's agent." The sub-conversation is an ordinary `Conversation` one level deeper, between a
fresh copy of the asking agent and the third member's agent. It is refused (and the refusal reported to the model)
when recursion is switched off, the depth limit is reached, the member is already in the chain (no cycles), the
asking member does not talk with them, their agent cannot take part, or the ask's LLM budget is spent. Its
conclusion returns into the parent conversation through the asking agent's act call, with the evidence lines the
third agent passed on (they enter the asking agent's notebook, attributed to that agent). One think call may bring
in several members (each with its own question): their sub-conversations run side by side, so the turn waits for the
longest, not for their sum.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

from bot.agents.agent import Agent
from bot.agents.outputs import RecruitRequest
from bot.agents.progress import Stage
from bot.agents.steps import RecruitOutcome, TaskStep, TurnStep
from bot.base.prompts import render_prompt
from bot.errors import UnknownMemberError
from bot.platform.port import SharePolicy


if TYPE_CHECKING:
    from bot.agents.conversation import Conversation


async def open_sub_conversations(
    parent: Conversation, asker: Agent, requests: list[RecruitRequest], *, step: TurnStep
) -> list[RecruitOutcome]:
    """One outcome per request, in order. Each is checked and its question leaves through the asking agent's outbox
    one after another (a member asked to approve sees one question at a time); the talks then run side by side."""
    outcomes: list[RecruitOutcome | RecruitRequest] = []  # a refusal, or a request whose talk is to run
    accepted: list[RecruitRequest] = []
    for request in requests:
        reason = await _refusal(parent, asker, request, pending=len(accepted))
        if not reason:  # the question leaves the asking agent: through its outbox, like everything else
            asked = await parent.ctx.outbox.send_question(
                asker, step, request.question or parent.task.question, to=request.member, conversation_id=parent.id,
                question=parent.task.question,
            )  # fmt: skip
            reason = "withheld" if asked is None else ""
            request = replace(request, question=asked or "")
        if reason:  # the question never left the asking agent: its record keeps none of it
            conclusion = render_prompt("agent", "recruit_result", reason=reason, conclusion="", me=asker.handle)
            outcomes.append(RecruitOutcome(replace(request, question=""), "refused", reason, conclusion))
        else:
            accepted.append(request)
            outcomes.append(request)
    talks = [asyncio.ensure_future(_talk(parent, asker, request, step)) for request in accepted]
    try:
        done = await asyncio.gather(*talks)
    except BaseException:  # one talk failed (a bug) or the ask was cancelled: the others stop too
        for talk in talks:
            talk.cancel()
        raise
    finished = iter(done)
    return [o if isinstance(o, RecruitOutcome) else next(finished) for o in outcomes]


async def _talk(parent: Conversation, asker: Agent, request: RecruitRequest, step: TurnStep) -> RecruitOutcome:
    from bot.agents.conversation import Conversation  # the two modules call each other

    ctx = parent.ctx
    target = await ctx.agent(request.member)
    ctx.report(Stage.BRINGING_IN, target.handle)
    question = request.question
    participants = [asker.handle, target.handle]
    conversation_id = await ctx.recorder.open_conversation(
        parent_id=parent.id, parent_turn=step.index, depth=parent.depth + 1, participants=participants,
        question=question,
    )  # fmt: skip
    child = Conversation(
        ctx,
        conversation_id=conversation_id,
        agents=[asker.fork(), target],
        task=TaskStep(question, asker.handle, participants),
        depth=parent.depth + 1,
        ancestors=(*parent.ancestors, target.handle),
    )
    result = await child.run()
    text = result.conclusion()
    conclusion = render_prompt("agent", "recruit_result", reason="done", conclusion=text, me=asker.handle)
    evidence = [replace(line, via=f"{target.handle}'s agent") for line in result.shared_evidence()]
    return RecruitOutcome(request, "done", "" if text else "nothing", conclusion, conversation_id, evidence)


async def _refusal(parent: Conversation, asker: Agent, request: RecruitRequest, *, pending: int) -> str | None:
    """Why `request` cannot be met, or None; `pending` talks this turn opens before it have their turns to pay."""
    ctx = parent.ctx
    if not ctx.ablations.recursion:
        return "ablation"
    if parent.depth + 1 > ctx.settings.recursion_depth:
        return "depth"
    try:
        target = await ctx.roster.profile(request.member)
    except UnknownMemberError:
        return "unknown"
    if target.handle in parent.ancestors:
        return "cycle"
    if target.handle in ctx.participants:
        return "present"
    if not await ctx.roster.talks_with(asker.handle, target.handle):
        return "not_contact"
    if not target.can_take_part or target.share is SharePolicy.NEVER:
        return "unavailable"
    if not ctx.budget.allows(2 * (pending + 1)):  # one turn of each agent brought in (it answers the question)
        return "budget"
    return None
