"""A member's personal agent: think (one structured LLM call), retrieve (memory, no LLM), act (one LLM call).

The agent fills in the `TurnStep` it is given; the conversation loop (`conversation.py`) decides whose turn it is,
handles errors and records the step. With InfoNav switched off (ablation "no-infonav") the agent prompts plainly:
no plan, no rationales. With a private model (privacy level L2) the memory hits go to the private model, and the act
call gets only the facts it extracted (`facts.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from bot import messages
from bot.agents.facts import extract_facts
from bot.agents.memory_tools import MemoryTools, QueryRecord
from bot.agents.outputs import ACT_SCHEMA, parse_act, parse_think, think_schema
from bot.agents.plan import Plan
from bot.agents.roster import MemberProfile
from bot.agents.steps import TaskStep, TurnStep, history_messages
from bot.errors import LLMOutputError
from bot.llm.client import LLMClient
from bot.llm.types import LLMRequest, LLMResult
from bot.port import SharePolicy
from bot.prompts import render_prompt


MAX_HITS_IN_PROMPT = 8
MAX_SEARCH_LINES = 6


@dataclass
class Observation:
    """What an agent sees before its turn (besides its own plan)."""

    task: TaskStep
    turns: list[TurnStep]
    turn: int  # index of the turn about to be taken
    people: list[str]  # whom it may bring in (empty: recursion not offered)
    error: str | None = None  # why its previous answer was unusable, for the model to fix


class Agent:
    """Args:
    llm (`LLMClient`): the main model (think, act).
    private_llm (`LLMClient | None`): the private model, the only one that reads memory hits; None = no split.
    """

    def __init__(
        self,
        profile: MemberProfile,
        *,
        llm: LLMClient,
        tools: MemoryTools,
        infonav: bool,
        plan: Plan | None = None,
        private_llm: LLMClient | None = None,
    ) -> None:
        self.profile = profile
        self.llm = llm
        self.private_llm = private_llm
        self.tools = tools
        self.infonav = infonav
        self.plan = Plan() if plan is None else plan

    @property
    def handle(self) -> str:
        return self.profile.handle

    @property
    def declines(self) -> bool:
        return self.profile.share is SharePolicy.NEVER

    def fork(self) -> Agent:
        """The same member's agent with a fresh plan, for a sub-conversation it opens."""
        return Agent(self.profile, llm=self.llm, tools=self.tools, infonav=self.infonav, private_llm=self.private_llm)

    # ------------------------------------------------------------------ the turn
    async def think(self, obs: Observation, step: TurnStep) -> None:
        prompt = render_prompt(
            "agent",
            "think" if self.infonav else "plain_think",
            turn=obs.turn,
            me=self.handle,
            plan=self._plan_json(),
            searches=_search_lines(obs.turns, self.handle),
            people=obs.people,
            error=obs.error,
        )
        result = await self._call("think", obs, prompt, step)
        with _keeping_reply(result):
            step.think = parse_think(result.data, with_plan=self.infonav)
        if self.infonav and step.think.plan is not None:
            step.update = step.update.merge(self.plan.revise(step.think.plan))

    async def retrieve(self, step: TurnStep) -> None:
        if step.think is not None:
            step.queries = await self.tools.run(step.think.clear, step.think.fuzzy)

    async def act(self, obs: Observation, step: TurnStep) -> None:
        hits = await self._memory_lines(obs, step)
        recruit = None
        if step.recruit is not None:
            recruit = {"member": step.recruit.request.member, "text": step.recruit.conclusion}
        prompt = render_prompt(
            "agent",
            "act" if self.infonav else "plain_act",
            turn=obs.turn,
            plan=self._plan_json(),
            searched=sum(1 for q in step.queries if not q.skipped),
            hits=hits,
            recruit=recruit,
        )
        result = await self._call("act", obs, prompt, step)
        with _keeping_reply(result):
            step.act = parse_act(result.data)
        step.utterance = step.act.utterance
        step.shared_facts = bool(hits or step.act.learned or (step.recruit and step.recruit.status == "done"))

    def adopt(self, step: TurnStep) -> None:
        """Take what the act call learned into the plan (only once the utterance may be shared)."""
        if self.infonav and step.act is not None:
            step.update = step.update.merge(self.plan.learn(step.act.learned))

    def decline(self, step: TurnStep, *, withheld: bool = False) -> None:
        """Take no part: the member's policy says never, or they did not approve this share."""
        owner = self.profile.display_name
        step.utterance = messages.agent_withholds(owner) if withheld else messages.agent_declines(owner)
        step.declined, step.shared_facts = True, False

    def snapshot(self, step: TurnStep) -> None:
        step.plan = self.plan.copy() if self.infonav else None

    async def _memory_lines(self, obs: Observation, step: TurnStep) -> list[str]:
        """What the act prompt shows of this turn's memory: the hits, or with a private model only its facts."""
        hits = _hit_lines(step.queries)
        if self.private_llm is None or not hits:
            return hits
        facts, call = await extract_facts(
            self.private_llm, me=self.handle, question=obs.task.question, plan=self._plan_json(), hits=hits
        )
        step.llm_calls.append(call)
        step.facts = facts
        return facts

    # ------------------------------------------------------------------ the LLM
    async def _call(self, purpose: str, obs: Observation, prompt: str, step: TurnStep) -> LLMResult:
        schema = think_schema(with_plan=self.infonav) if purpose == "think" else ACT_SCHEMA
        chat = [
            {"role": "system", "content": render_prompt("agent", "system", me=self.handle)},
            *history_messages(obs.task, obs.turns, self.handle),
            {"role": "user", "content": prompt},
        ]
        result = await self.llm.complete(LLMRequest(chat, purpose=purpose, json_schema=schema, schema_name=purpose))
        step.llm_calls.append(result.call)
        return result

    def _plan_json(self) -> str:
        return json.dumps(self.plan.dict(), ensure_ascii=False, separators=(",", ":"))


@contextmanager
def _keeping_reply(result: LLMResult) -> Iterator[None]:
    """An answer in the right JSON shape that still cannot be used keeps its text, for the turn's error record."""
    try:
        yield
    except LLMOutputError as exc:
        exc.reply = result.text
        raise


def _search_lines(turns: list[TurnStep], handle: str) -> list[str]:
    """This agent's latest searches and how many hits each found, so it can adjust its parameters."""
    queries = [q for t in turns if t.agent == handle for q in t.queries]
    return [_describe(q) for q in queries[-MAX_SEARCH_LINES:]]


def _describe(query: QueryRecord) -> str:
    params = {k: v for k, v in query.params.items() if v not in (None, [], "")}
    outcome = query.skipped or query.error or f"{len(query.hit_ids)} hits"
    return f"{query.kind} {json.dumps(params, ensure_ascii=False, separators=(',', ':'))} -> {outcome}"


def _hit_lines(queries: list[QueryRecord]) -> list[str]:
    seen: dict[str, None] = {}
    for query in queries:
        for line in query.hits:
            seen.setdefault(line, None)
    return list(seen)[:MAX_HITS_IN_PROMPT]
