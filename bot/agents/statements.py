"""Consensus, per side: when a talk ends, the colleague's agent states its side over its OWN notebook.

The iAgents consensus has every agent state its answer before the answers are combined. Here each colleague's agent
writes that statement itself, on its own side, reading what its member's memory gave it in this ask (its notebook,
whole within the evidence budget), with its plan and the talk, and cites the message ids each claim rests on. The
statement is one more thing that leaves the agent, so it goes through the share screen and the "ask me" approval
exactly like a turn (`bot.consent.screen`, `bot.consent.approval`): claims must fill a rationale of the question and
cite lines, verbatim memory text passes only as cited evidence within the per-ask cap, and a member who does not
approve keeps all of it. Only the screened statement, and the lines its kept claims cite, cross to the requester's
side, where the final consensus (`bot.agents.consensus`) combines the statements; a statement none of whose claims
survives the screen cites nothing, and stays with its agent (nobody is asked to approve it).

The requester's side writes no statement of its own: the final consensus runs there and reads its notebooks whole.
No statement, and no LLM call, when there is nothing new to state: the member's policy is never, the talk failed,
the agent made no plan (plain prompting), or every line of its notebook has crossed already. Statements of several
colleagues run concurrently: each is written as soon as its own talk ends (`bot.agents.multiparty`).
"""

from __future__ import annotations

import json

from bot.agents.agent import Agent
from bot.agents.context import AskContext
from bot.agents.conversation import ConversationResult
from bot.agents.outputs import STATEMENT_SCHEMA, parse_statement
from bot.agents.steps import StatementStep, history_messages
from bot.base.prompts import render_prompt
from bot.consent.outbox import Sent, Verdict
from bot.errors import LLMConfigurationError, LLMError, LLMOutputError
from bot.llm.types import LLMRequest
from bot.texts import conversation_texts, transcript_texts


async def state_side(ctx: AskContext, result: ConversationResult) -> None:
    """The colleague's closing statement for `result` (kept on `result.closing`), screened, approved and recorded."""
    agent = result.agents[-1]
    if not _has_something_new(ctx, result, agent):
        return
    step = StatementStep(len(result.turns), agent.handle)
    try:
        await _write(ctx, result, agent, step)
    except LLMError as exc:  # the ask goes on without this side's statement: its shared turns still count
        if isinstance(exc, LLMConfigurationError):
            ctx.refusal = exc
        step.error = exc.dict()
        if (call := getattr(exc, "call", None)) is not None:
            step.llm_calls.append(call)
    else:
        verdict = await ctx.outbox.send(
            agent, step, result.turns, question=ctx.question, conversation_id=result.conversation_id,
            partner=result.task.asker,
        )  # fmt: skip
        if verdict is Verdict.NOTHING:
            pass  # no claim survived the screen: it cites nothing of the member's memory, so nothing crosses
        elif verdict is Verdict.SENT:
            step.crossed = True
            step.released = agent.notebook.release((step.sharing or {}).get("cited", []))
        else:
            _withhold(agent, step, for_others=Sent.from_dict(step.sharing["sent"]).held_for_others)
    result.closing = step
    ctx.tokens.spend([call.prompt_tokens for call in step.llm_calls])
    await ctx.recorder.save_statement(result.conversation_id, step)


def _has_something_new(ctx: AskContext, result: ConversationResult, agent: Agent) -> bool:
    if agent.handle == ctx.requester or agent.declines or not agent.planning:
        return False
    if result.failed or ctx.refusal is not None:
        return False
    return any(i not in agent.notebook.released for i in agent.notebook.lines)


async def _write(ctx: AskContext, result: ConversationResult, agent: Agent, step: StatementStep) -> None:
    shown, step.cut = agent.notebook.select(agent.plan, agent.budget.act_notebook, question=ctx.question)
    step.shown = [line.id for line in shown]
    prompt = render_prompt(
        "agent",
        "statement",
        me=agent.handle,
        plan=json.dumps(agent.plan.dict(), ensure_ascii=False, separators=(",", ":")),
        notebook=[line.render() for line in shown],
        cut=step.cut,
        whole_history=agent.notebook.whole_history,
    )
    partner = result.task.asker
    grounding = agent.grounding.render(agent.handle, partner) if agent.grounding else ""
    system = render_prompt(
        "agent", "system", me=agent.handle, grounding=grounding, privacy_prompt=agent.privacy_prompt
    )
    chat = [
        {"role": "system", "content": system},
        *history_messages(result.task, result.turns, agent.handle, budget_tokens=agent.budget.talk),
        {"role": "user", "content": prompt},
    ]
    reply = await ctx.llm.complete(
        LLMRequest(chat, purpose="statement", json_schema=STATEMENT_SCHEMA, schema_name="statement")
    )
    reply.call.prompt = chat
    step.llm_calls.append(reply.call)
    try:
        step.act = parse_statement(reply.data)
    except LLMOutputError as exc:
        exc.reply = reply.text
        raise
    step.utterance = step.act.utterance
    step.shared_facts = True  # written from the member's memory: an "ask me" member always sees it first


def _withhold(agent: Agent, step: StatementStep, *, for_others: bool) -> None:
    """Not approved: nothing of the statement crosses, and its record keeps none of the withheld text."""
    step.declined, step.shared_facts = True, False
    step.utterance = conversation_texts.agent_withholds(agent.profile.display_name, for_others=for_others)
    step.act, step.shown, step.released = None, [], []
    for call in step.llm_calls:
        call.prompt = [{"role": "system", "content": transcript_texts.prompt_withheld()}] if call.prompt else []
