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

from bot.agents.blackboard import Blackboard
from bot.agents.evidence import EvidenceLine, fuse
from bot.agents.facts import extract_facts
from bot.agents.grounding import Grounding
from bot.agents.memory_tools import MemoryTools, QueryRecord
from bot.agents.notebook import Notebook
from bot.agents.outputs import ACT_SCHEMA, MAX_RECRUITS, ActOutput, parse_act, parse_think, think_schema
from bot.agents.plan import Plan, PlanUpdate
from bot.agents.roster import MemberProfile
from bot.agents.steps import TaskStep, TurnStep, history_messages
from bot.base.prompts import render_prompt
from bot.errors import LLMOutputError
from bot.llm.client import LLMClient
from bot.llm.types import LLMRequest, LLMResult
from bot.platform.port import SharePolicy
from bot.texts import conversation_texts, transcript_texts


@dataclass
class Observation:
    """What an agent sees before its turn (besides its own plan and notebook)."""

    task: TaskStep
    turns: list[TurnStep]
    turn: int  # index of the turn about to be taken
    people: list[str]  # whom it may bring in (empty: recursion not offered)
    error: str | None = None  # why its previous answer was unusable, for the model to fix
    branch: str = ""  # the colleague of the top-level conversation this turn belongs to

    @property
    def partner(self) -> str | None:
        return next((p for p in self.task.participants if p != self.task.asker), None)


@dataclass(frozen=True)
class Budget:
    """Evidence tokens per prompt, split between its parts (see ASKWITH_EVIDENCE_BUDGET_TOKENS)."""

    tokens: int

    @property
    def act_notebook(self) -> int:
        return self.tokens * 3 // 4

    @property
    def think_notebook(self) -> int:
        return self.tokens // 2

    @property
    def talk(self) -> int:
        return self.tokens // 4


class Agent:
    """Args:
    llm (`LLMClient`): the main model (think, act).
    private_llm (`LLMClient | None`): the private model, the only one that reads memory hits; None = no split.
    budget (`int`): evidence tokens per prompt; whole_history (`bool`): read everything when it fits.
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
        budget: int = 6000,
        notebook: Notebook | None = None,
        grounding: Grounding | None = None,
        blackboard: Blackboard | None = None,
        privacy_prompt: bool = False,  # the system prompt asks the agent to protect private information
    ) -> None:
        self.privacy_prompt = privacy_prompt
        self.profile = profile
        self.llm = llm
        self.private_llm = private_llm
        self.tools = tools
        self.infonav = infonav
        self.plan = Plan() if plan is None else plan
        self.budget = Budget(budget)
        self.notebook = Notebook() if notebook is None else notebook
        self.grounding = grounding
        self.blackboard = blackboard
        self._pending: list[EvidenceLine] = []  # raw lines waiting for the private model (privacy split)

    @property
    def handle(self) -> str:
        return self.profile.handle

    @property
    def planning(self) -> bool:
        """InfoNav with a plan to fill; a model that made no plan answers directly, as in plain prompting."""
        return self.infonav and bool(self.plan.rationales)

    @property
    def declines(self) -> bool:
        """The member shares nothing (policy never) or has memory off: the agent takes no part."""
        return self.profile.share is SharePolicy.NEVER or not self.profile.can_take_part

    def fork(self) -> Agent:
        """The same member's agent with a fresh plan and notebook, for a sub-conversation it opens."""
        return Agent(
            self.profile, llm=self.llm, tools=self.tools, infonav=self.infonav, private_llm=self.private_llm,
            budget=self.budget.tokens, grounding=self.grounding, blackboard=None, privacy_prompt=self.privacy_prompt,
        )  # fmt: skip

    # ------------------------------------------------------------------ the turn
    async def prepare(self, turns: list[TurnStep], step: TurnStep) -> None:
        """Before its first turn: read the member's whole history when it fits the budget (no LLM)."""
        if any(t.agent == self.handle for t in turns) or not self.tools.whole_budget:
            return
        record = await self.tools.read_whole()
        step.queries.append(record)
        if record.hits:
            self.notebook.whole_history = step.whole_history = True
            self._note(step, record.hits)

    async def think(self, obs: Observation, step: TurnStep) -> None:
        shown, cut = self._notebook_view(self.budget.think_notebook)
        step.cuts["think"] = cut
        prompt = render_prompt(
            "agent",
            "think" if self.infonav else "plain_think",
            turn=obs.turn,
            me=self.handle,
            plan=self._plan_json(),
            notebook=shown,
            cut=cut,
            whole_history=self.notebook.whole_history,
            searches=_search_lines(obs.turns, self.handle),
            people=obs.people,
            max_recruits=MAX_RECRUITS,
            blackboard=self._board(obs),
            error=obs.error,
        )
        result = await self._call("think", obs, prompt, step)
        with _keeping_reply(result):
            step.think = parse_think(result.data, with_plan=self.infonav)
        if self.infonav and step.think.plan is not None:
            step.update = step.update.merge(self.plan.revise(step.think.plan))

    async def retrieve(self, step: TurnStep) -> None:
        if step.think is None:
            return
        if self.notebook.whole_history:  # everything the member can see is already read: nothing to search
            step.think.clear, step.think.fuzzy = [], []
        queries = await self.tools.run(step.think.clear, step.think.fuzzy)
        step.queries.extend(queries)
        self._note(step, fuse(q.hits for q in queries if q.hits))

    async def act(self, obs: Observation, step: TurnStep) -> None:
        await self._read_pending(obs, step)
        recruits = [{"member": r.request.member, "text": r.conclusion} for r in step.recruits]
        for outcome in step.recruits:
            step.evidence.extend(self.notebook.add(outcome.evidence, turn=step.index))
        # The notebook is shown once a turn: whole but brief in think; here, in full, the lines this turn added.
        fresh = {line.id for line in step.evidence}
        shown, cut = self.notebook.select(self.plan, self.budget.act_notebook, only=fresh)
        step.cuts["act"] = cut
        prompt = render_prompt(
            "agent",
            "act" if self.planning else "plain_act",
            turn=obs.turn,
            plan=self._plan_json(),
            searched=sum(1 for q in step.queries if not q.skipped),
            new=len(step.evidence),
            hits=[line.render() for line in shown],
            cut=cut,
            earlier=len(self.notebook.lines) - len(fresh),
            whole_history=self.notebook.whole_history,
            blackboard=self._board(obs),
            recruits=recruits,
        )
        result = await self._call("act", obs, prompt, step)
        with _keeping_reply(result):
            step.act = parse_act(result.data)
        step.utterance = step.act.utterance
        brought = any(r.status == "done" for r in step.recruits)
        step.shared_facts = bool(step.evidence or step.act.learned or brought)

    def adopt(self, step: TurnStep, *, release: list[str]) -> None:
        """Take what the act call learned into the plan and release the notebook lines the share screen let through
        (only once the turn may be shared)."""
        if self.infonav and step.act is not None:
            step.update = step.update.merge(self.plan.learn(step.act.learned))
        step.released = self.notebook.release(release)

    def close(self, step: TurnStep) -> None:
        """This turn ends the talk (its plan is complete, or it has nothing left to try) and leaves nothing to
        search or ask: no act call, as nobody would hear its answer (consensus reads the plan)."""
        step.act = ActOutput(conversation_texts.agent_closes(complete=self.plan.is_complete))
        step.utterance = step.act.utterance

    def decline(self, step: TurnStep, *, withheld: bool = False, for_others: bool = False) -> None:
        """Take no part: the member's policy says never, or this share was not approved (by them, or by the others
        whose words it carries)."""
        owner = self.profile.display_name
        held = conversation_texts.agent_withholds(owner, for_others=for_others)
        step.utterance = held if withheld else conversation_texts.agent_declines(owner)
        step.declined, step.shared_facts = True, False

    def withhold(self, step: TurnStep, plan_before: Plan, *, for_others: bool = False) -> None:
        """This turn's share was not approved: nothing of it leaves (words, facts, answer, plan values), and the
        record keeps none of the withheld text either (the requester may read the transcript)."""
        self.decline(step, withheld=True, for_others=for_others)
        self.plan = plan_before
        step.act = ActOutput(step.utterance) if step.act is not None else None
        step.forget_unsent(transcript_texts.prompt_withheld())

    def fail(self, step: TurnStep, plan_before: Plan) -> None:
        """The turn failed (a model call errored) before its outbox ran: nothing of it left, so the agent goes back
        to the plan it had passed on (think may have filled values from memory), and the record keeps none of the
        turn's unsent text. The lines it read stay in the notebook, its member's own memory."""
        self.plan = plan_before
        step.update = PlanUpdate()
        step.act, step.utterance, step.shared_facts = None, "", False
        step.forget_unsent(transcript_texts.prompt_failed())

    def snapshot(self, step: TurnStep) -> None:
        step.plan = self.plan.copy() if self.infonav else None

    def restore(self, turns: list[TurnStep]) -> None:
        """Rebuild the notebook from this agent's saved turns (a resumed ask)."""
        for step in (t for t in turns if t.agent == self.handle):
            self.notebook.restore(step.evidence, step.released, whole_history=step.whole_history)

    # ------------------------------------------------------------------ evidence
    def _note(self, step: TurnStep, lines: list[EvidenceLine]) -> None:
        if self.private_llm is not None:
            self._pending.extend(lines)  # the private model reads them first, in act
        else:
            step.evidence.extend(self.notebook.add(lines, turn=step.index))

    async def _read_pending(self, obs: Observation, step: TurnStep) -> None:
        """Privacy split: the private model reads this turn's raw lines; only its fact lines enter the notebook."""
        fresh = [line for line in self._pending if line.id not in self.notebook.lines]
        self._pending = []
        if self.private_llm is None or not fresh:
            return
        facts, call = await extract_facts(
            self.private_llm, me=self.handle, question=obs.task.question, plan=self._plan_json(),
            hits=[line.render() for line in fresh],
        )  # fmt: skip
        step.llm_calls.append(call)
        step.facts = facts
        step.evidence.extend(self.notebook.add(_fact_lines(facts), turn=step.index))

    def _notebook_view(self, budget: int) -> tuple[list[EvidenceLine], int]:
        return self.notebook.select(self.plan, budget)

    def _board(self, obs: Observation) -> list[str]:
        return self.blackboard.lines_for(obs.branch) if self.blackboard is not None else []

    # ------------------------------------------------------------------ the LLM
    async def _call(self, purpose: str, obs: Observation, prompt: str, step: TurnStep) -> LLMResult:
        schema = think_schema(with_plan=self.infonav) if purpose == "think" else ACT_SCHEMA
        partner = next((p for p in obs.task.participants if p != self.handle), None)
        grounding = self.grounding.render(self.handle, partner) if self.grounding else ""
        chat = [
            {"role": "system", "content": self._system_prompt(grounding)},
            *history_messages(obs.task, obs.turns, self.handle, budget_tokens=self.budget.talk),
            {"role": "user", "content": prompt},
        ]
        result = await self.llm.complete(LLMRequest(chat, purpose=purpose, json_schema=schema, schema_name=purpose))
        result.call.prompt = chat
        step.llm_calls.append(result.call)
        return result

    def _system_prompt(self, grounding: str = "") -> str:
        return render_prompt(
            "agent", "system", me=self.handle, grounding=grounding, privacy_prompt=self.privacy_prompt
        )

    def _plan_json(self) -> str:
        return json.dumps(self.plan.dict(), ensure_ascii=False, separators=(",", ":"))


def _fact_lines(facts: list[str]) -> list[EvidenceLine]:
    """The private model's fact lines ("[source] fact") as notebook lines, one per fact."""
    lines: list[EvidenceLine] = []
    seen: set[str] = set()
    for index, fact in enumerate(facts):
        source, _, text = fact.partition("] ")
        source = source.lstrip("[")
        line_id = source if source != "?" and source not in seen else f"{source}#{index}"
        seen.add(line_id)
        lines.append(EvidenceLine(line_id, "", "", "facts", text, via="facts"))
    return lines


@contextmanager
def _keeping_reply(result: LLMResult) -> Iterator[None]:
    """An answer in the right JSON shape that still cannot be used keeps its text, for the turn's error record."""
    try:
        yield
    except LLMOutputError as exc:
        exc.reply = result.text
        raise


def _search_lines(turns: list[TurnStep], handle: str) -> list[str]:
    """Every search this agent made in this talk, once each, and what it found: so it neither repeats one nor
    runs out of sight of its first ones (one short line a search)."""
    return list(dict.fromkeys(_describe(q) for t in turns if t.agent == handle for q in t.queries))


def _describe(query: QueryRecord) -> str:
    params = {k: v for k, v in query.params.items() if v not in (None, [], "")}
    outcome = query.skipped or query.error or f"{len(query.hit_ids)} hits"
    return f"{query.kind} {json.dumps(params, ensure_ascii=False, separators=(',', ':'))} -> {outcome}"
