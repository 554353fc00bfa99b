"""THE loop: two agents take turns until the asking side's plan has no unknowns, one cannot progress, or `max_turns`.

A turn = observe (on the agent's first turn: read the whole history when it fits the budget) -> think (LLM) ->
retrieve (memory, no LLM) -> recruit (a sub-conversation, decided after seeing what the search found) -> act (LLM)
-> share (privacy; then publish to the ask's blackboard) -> record. Errors the model causes (unusable output after
repair, the endpoint down) become recorded, user-readable failures; anything else is a bug and propagates.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace

from bot.agents.agent import Agent, Observation
from bot.agents.context import AskContext
from bot.agents.evidence import EvidenceLine, overlap, words
from bot.agents.plan import Plan
from bot.agents.progress import Stage
from bot.agents.steps import RecruitOutcome, StatementStep, TaskStep, TurnStep, sent_plan
from bot.base.prompts import render_prompt
from bot.consent.outbox import Sent, Verdict
from bot.errors import LLMConfigurationError, LLMError, LLMOutputError, LLMUnavailableError


MAX_OUTPUT_ERRORS = 2  # consecutive unusable answers from one agent before the conversation gives up
SUB_CONVERSATION_TURNS = 1  # a sub-conversation answers one question: the agent brought in answers it
MAX_CANDIDATES = 8  # people offered for recruiting
PROMPT_OVERHEAD_TOKENS = 2000  # a prompt beyond its evidence (instructions, grounding, plan), estimated


@dataclass
class ConversationResult:
    conversation_id: int
    task: TaskStep
    agents: list[Agent]
    turns: list[TurnStep]
    # plans_complete | all_done | colleague_answered | cannot_progress | max_turns | budget | token_budget |
    # llm_unavailable | llm_output | llm_refused
    stop_reason: str
    depth: int = 0
    children: list[int] = field(default_factory=list)
    closing: StatementStep | None = None  # the colleague's closing statement, when it wrote one (statements.py)

    @property
    def failed(self) -> bool:
        return self.stop_reason in ("llm_unavailable", "llm_output", "llm_refused")

    def statement(self, agent: Agent) -> str | None:
        """What the agent states for consensus: its closing statement when it crossed, else its latest answer that
        left through its outbox (the asking agent's are its own member's)."""
        if self.closing is not None and self.closing.agent == agent.handle and (said := self.closing.text()):
            return said
        mine = (t for t in reversed(self.turns) if t.agent == agent.handle and t.answer)
        return next((t.answer for t in mine if t.sent or agent.handle == self.task.asker), None)

    def conclusion(self) -> str:
        """What a sub-conversation brings back to its parent: the asking agent's answer, else what it learned."""
        asker = self.agents[0]
        if answer := self.statement(asker):
            return answer
        known = "; ".join(f"{r.need}: {r.value} [{r.source}]" for r in asker.plan.known)
        if known:
            return known
        heard = [t.utterance for t in self.turns if t.agent != asker.handle and t.utterance]
        return heard[-1] if heard else ""

    def shared_evidence(self) -> list[EvidenceLine]:
        """The lines the asked agent passed on (what a sub-conversation hands back with its conclusion)."""
        return [line for agent in self.agents[1:] for line in agent.notebook.shared_lines()]


class Conversation:
    def __init__(
        self,
        ctx: AskContext,
        *,
        conversation_id: int,
        agents: list[Agent],
        task: TaskStep,
        depth: int = 0,
        ancestors: tuple[str, ...] = (),
        turns: list[TurnStep] | None = None,
        branch: str = "",
    ) -> None:
        self.ctx = ctx
        self.id = conversation_id
        self.agents = agents
        self.task = task
        self.depth = depth
        self.ancestors = ancestors  # handles of every agent in this conversation and the ones above it
        self.turns = [] if turns is None else list(turns)  # saved turns, when a killed ask is resumed
        self.branch = branch or (agents[1].handle if len(agents) > 1 else "")  # the colleague of the top-level talk
        self.recruiter = agents[0].handle if depth else None  # whose agent brought this talk's colleague in
        for agent in agents:
            agent.restore(self.turns)

    async def run(self) -> ConversationResult:
        stop = self._stop_reason()
        index = len(self.turns)
        max_turns = self.ctx.settings.max_turns
        if self.depth:
            max_turns = min(max_turns, SUB_CONVERSATION_TURNS)
        while stop is None and index < max_turns:
            if self.depth and not self.ctx.budget.allows(2):
                stop = "budget"
                break
            if not self._tokens_allow_turn():
                stop = "token_budget"
                break
            agent = self._speaker(index)
            step = await self._take_turn(agent, index)
            self.ctx.tokens.spend([call.prompt_tokens for call in step.llm_calls])
            if self.depth:
                self.ctx.budget.spend(len(step.llm_calls))
            self.turns.append(step)
            await self.ctx.recorder.save_turn(self.id, step, depth=self.depth)
            stop = self._stop_reason()
            index += 1
        stop = stop or "max_turns"
        result = ConversationResult(self.id, self.task, self.agents, self.turns, stop, self.depth)
        await self.ctx.recorder.close_conversation(self.id, stop_reason=stop, conclusion=result.conclusion())
        return result

    def _speaker(self, index: int) -> Agent:
        """Whose turn it is. A sub-conversation opens with its question ("Hold on, I can ask Carol's agent"): the
        agent brought in speaks first, as the asking agent's searches are done already."""
        return self.agents[(index + bool(self.depth)) % len(self.agents)]

    def _tokens_allow_turn(self) -> bool:
        """The ask's prompt-token budget has room for a turn (two calls) and, after it, a closing statement per
        colleague and the consensus call."""
        return self.ctx.tokens.allows_turn(
            calls=2,
            reserved_calls=max(1, len(self.ctx.participants)),
            call_estimate=self.ctx.settings.evidence_budget + PROMPT_OVERHEAD_TOKENS,
        )

    async def _take_turn(self, agent: Agent, index: int) -> TurnStep:
        step = TurnStep(index, agent.handle)
        started = time.perf_counter()
        plan_before = agent.plan.copy()  # what the agent had passed on before this turn
        try:
            await self.ctx.outbox.profile(agent)  # the member's settings now: memory off or never stops the turn
            if agent.declines:
                agent.decline(step)
            else:
                await agent.prepare(self.turns, step)
                observation = await self._observe(agent, index)
                await agent.think(observation, step)
                if self._closes_talk(agent, step):
                    agent.close(step)
                else:
                    if self.depth == 0:
                        self.ctx.report(Stage.SEARCHING, agent.handle)
                    await agent.retrieve(step)
                    await self._recruit(agent, step)
                    await agent.act(observation, step)
                await self._share(agent, step, plan_before)
                if self.depth == 0:
                    self.ctx.report(Stage.TALKING, self.branch)
        except LLMError as exc:  # caused by the model or its endpoint: record it, let the loop decide
            if isinstance(exc, LLMConfigurationError):
                self.ctx.refusal = exc  # every branch of the ask stops: no call can succeed
            if (call := getattr(exc, "call", None)) is not None:
                step.llm_calls.append(call)
            agent.fail(step, plan_before)  # the outbox never ran: nothing of the turn left, nothing of it is kept
            # The error names what was wrong, never a value; the unusable answer itself may quote memory: only its
            # length is kept.
            step.error = exc.dict()
            if reply := getattr(exc, "reply", None):
                step.error["reply_chars"] = len(reply)
        finally:
            agent.snapshot(step)
            step.latency_s = time.perf_counter() - started
        return step

    def _closes_talk(self, agent: Agent, step: TurnStep) -> bool:
        """The think call ends the top-level talk with nothing left to do this turn: the asking agent's plan is
        complete, or it cannot progress, and it asked for no search and nobody to bring in (then no act call)."""
        think = step.think
        if self.depth or think is None or not agent.planning or think.recruits:
            return False
        if (think.clear or think.fuzzy) and not agent.notebook.whole_history:
            return False
        if not self._everyone_spoke(also=agent.handle):
            return False
        return think.cannot_progress or (agent is self.agents[0] and agent.plan.is_complete)

    async def _observe(self, agent: Agent, index: int) -> Observation:
        people = await self._recruitable(agent)
        return Observation(self.task, self.turns, index, people, self._last_error(agent), branch=self.branch)

    async def _recruit(self, agent: Agent, step: TurnStep) -> None:
        """After retrieval: bring in the third agents the think call asked for, their sub-conversations side by
        side; a request made only in case the search found nothing is dropped when it found something (no
        sub-conversation, no extra LLM call)."""
        if step.think is None or not step.think.recruits:
            return
        requests = step.think.recruits
        from bot.agents.recursion import open_sub_conversations  # the two modules call each other

        wanted = [r for r in requests if not (r.only_if_not_found and step.evidence)]
        opened = iter(await open_sub_conversations(self, agent, wanted, step=step))  # one outcome each, in order
        found = render_prompt("agent", "recruit_result", reason="found_locally", conclusion="", me=agent.handle)
        unsent = [replace(r, question="") for r in requests]  # a question not asked never left the agent
        step.recruits = [next(opened) if r in wanted else RecruitOutcome(q, "refused", "found_locally", found)
                         for r, q in zip(requests, unsent, strict=True)]  # fmt: skip
        # The think output keeps each question as it left (or "": withheld or not asked), never as written.
        step.think.recruits = [outcome.request for outcome in step.recruits]

    async def _share(self, agent: Agent, step: TurnStep, plan_before: Plan) -> None:
        """The turn leaves through the agent's outbox (bot.consent.outbox): screened, approved when the member's
        policy asks; then it releases the notebook lines it cites and publishes what it solved on the blackboard."""
        verdict = await self.ctx.outbox.send(
            agent, step, self.turns, question=self.task.question, conversation_id=self.id, recruiter=self.recruiter,
            partner=next((a.handle for a in self.agents if a is not agent), None),
        )  # fmt: skip
        if verdict is not Verdict.SENT:
            agent.withhold(step, plan_before, for_others=Sent.from_dict(step.sharing["sent"]).held_for_others)
            return
        agent.adopt(step, release=list((step.sharing or {}).get("cited", [])))
        if self.depth == 0 and agent.infonav:
            step.published = self.ctx.blackboard.publish(
                branch=self.branch, agent=agent.handle, plan=agent.plan, solved=step.update.solved
            )

    async def _recruitable(self, agent: Agent) -> list[str]:
        """Whom this agent may bring in: people its member talks with, not already in the chain nor brought in by
        this talk, those whose messages in its notebook bear on the open rationales first (then DMs, then small
        channels)."""
        if not self.ctx.ablations.recursion or self.depth >= self.ctx.settings.recursion_depth:
            return []
        contacts = await self.ctx.roster.contacts(agent.handle)
        asked = {r.request.member for t in self.turns for r in t.recruits}  # once a talk: the same answer
        allowed = [c for c in contacts if c not in self.ancestors and c not in self.ctx.participants | asked]
        wanted = words(" ".join(r.need for r in agent.plan.unknowns) or self.task.question)
        talk = Counter(line.sender for line in agent.notebook.lines.values() if overlap(line, wanted))
        order = {c: i for i, c in enumerate(allowed)}
        return sorted(allowed, key=lambda c: (-talk[c], order[c]))[:MAX_CANDIDATES]

    def _last_error(self, agent: Agent) -> str | None:
        mine = [t for t in self.turns if t.agent == agent.handle]
        if mine and mine[-1].error:
            return str(mine[-1].error.get("message", ""))
        return None

    # ------------------------------------------------------------------ stopping
    def _stop_reason(self) -> str | None:
        if self.ctx.refusal is not None:
            return "llm_refused"
        if not self.turns:
            return None
        last = self.turns[-1]
        if last.error and last.error.get("type") == LLMUnavailableError.__name__:
            return "llm_unavailable"
        if self._output_errors(last.agent) >= MAX_OUTPUT_ERRORS:
            return "llm_output"
        if last.error:
            return None  # a failed turn answers nothing: the next one tries again
        if not self._everyone_spoke():
            return None
        if last.cannot_progress:
            return "cannot_progress"
        # The question is answered when the asking side's plan is complete (the other side states what it holds in
        # its closing statement); a sub-conversation, when the agent brought in has answered its question.
        deciding = self.agents[1:] if self.depth else self.agents[:1]
        if all(a.plan.is_complete if a.planning else self._said_done(a) for a in deciding):
            return "plans_complete" if all(a.planning for a in deciding) else "all_done"
        # Every part the asking agent still misses, the colleague's agent has just filled: its closing statement
        # carries them to consensus, so another round would only repeat them.
        if not self.depth and last.agent != self.agents[0].handle and self._filled_by(last.agent, self.agents[0]):
            return "colleague_answered"
        return None

    def _everyone_spoke(self, *, also: str | None = None) -> bool:
        """Everyone has had a turn (with `also`, the agent whose turn it is): the asker giving up on turn 0 still
        lets the partner look; in a sub-conversation, the agent brought in must have spoken."""
        speakers = self.agents[1:] if self.depth else self.agents
        spoke = {t.agent for t in self.turns} | ({also} if also else set())
        return {a.handle for a in speakers} <= spoke

    def _filled_by(self, handle: str, asker: Agent) -> bool:
        speaker = next(a for a in self.agents if a.handle == handle)
        if not (asker.planning and speaker.planning):
            return False
        known = {r.need.strip().lower() for r in sent_plan(self.turns, handle).known}  # what reached the asker
        return all(r.need.strip().lower() in known for r in asker.plan.unknowns)

    def _output_errors(self, handle: str) -> int:
        count = 0
        for step in reversed([t for t in self.turns if t.agent == handle]):
            if not step.error or step.error.get("type") != LLMOutputError.__name__:
                break
            count += 1
        return count

    def _said_done(self, agent: Agent) -> bool:
        mine = [t for t in self.turns if t.agent == agent.handle]
        return bool(mine and mine[-1].think and mine[-1].think.done)
