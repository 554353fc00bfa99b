"""What every conversation of one ask shares: settings, LLM, memory, roster, record, outbox, budget, the
grounding every prompt carries and the blackboard of a multi-party ask."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bot.agents.ablations import Ablations
from bot.agents.agent import Agent, Budget
from bot.agents.blackboard import Blackboard
from bot.agents.grounding import Grounding
from bot.agents.memory_tools import MemoryTools, SearchCache
from bot.agents.plan import Plan
from bot.agents.progress import ProgressSink, Stage
from bot.agents.roster import Roster
from bot.agents.steps import StatementStep, TurnStep
from bot.consent.outbox import Outbox
from bot.errors import LLMConfigurationError
from bot.llm.client import LLMClient
from bot.memory.access import MemoryAccess
from bot.settings import Settings


class ConversationRecorder(Protocol):
    """Where conversations are saved (the database, see `bot.asks.record`), turn by turn."""

    async def open_conversation(
        self, *, parent_id: int | None, parent_turn: int | None, depth: int, participants: list[str], question: str
    ) -> int: ...

    async def save_turn(self, conversation_id: int, step: TurnStep, *, depth: int) -> None: ...

    async def close_conversation(self, conversation_id: int, *, stop_reason: str, conclusion: str) -> None: ...

    async def save_statement(self, conversation_id: int, step: StatementStep) -> None: ...


@dataclass
class RecursionBudget:
    """LLM calls that all sub-conversations of one ask may spend together."""

    limit: int
    spent: int = 0

    def allows(self, calls: int) -> bool:
        return self.spent + calls <= self.limit

    def spend(self, calls: int) -> None:
        self.spent += calls


@dataclass
class TokenBudget:
    """Prompt tokens all LLM calls of one ask may spend together (ASKWITH_ASK_TOKEN_BUDGET). A turn is taken only
    when, after it, the closing statements and consensus can still be paid for; `spent` starts from what a resumed
    ask had already spent."""

    limit: int
    spent: int = 0
    largest_call: int = 0  # the largest prompt seen so far: the estimate of the next one

    def spend(self, prompt_tokens: Sequence[int]) -> None:
        self.spent += sum(prompt_tokens)
        self.largest_call = max([self.largest_call, *prompt_tokens])

    def allows_turn(self, *, calls: int, reserved_calls: int, call_estimate: int) -> bool:
        """Room for a turn of `calls` calls plus `reserved_calls` more (statements, consensus) after it, each
        counted at the larger of `call_estimate` and the largest prompt so far (prompts grow as a talk goes on)."""
        per_call = max(self.largest_call, call_estimate)
        return self.spent + per_call * (calls + reserved_calls) <= self.limit


@dataclass
class AskContext:
    ask_id: int
    question: str
    requester: str  # handle
    settings: Settings
    ablations: Ablations
    llm: LLMClient
    memory: MemoryAccess
    roster: Roster
    recorder: ConversationRecorder
    outbox: Outbox  # the one way out of every member agent of the ask
    budget: RecursionBudget
    tokens: TokenBudget = field(default_factory=lambda: TokenBudget(limit=2**62))
    participants: frozenset[str] = frozenset()  # requester and colleagues: already asked, never brought in
    searches: SearchCache = field(default_factory=dict)  # memory hits already found in this ask
    grounding: Grounding | None = None  # None: prompts carry no grounding (only in narrow unit tests)
    blackboard: Blackboard = field(default_factory=Blackboard)
    refusal: LLMConfigurationError | None = None  # the endpoint refused its setup: every conversation stops
    progress: ProgressSink | None = None  # told what the ask is doing now (bot.asks.progress)

    def report(self, stage: Stage, detail: str = "") -> None:
        if self.progress is not None:
            self.progress(stage, detail)

    async def agent(self, who: str, *, plan: Plan | None = None) -> Agent:
        profile = await self.roster.profile(who)
        budget = self.settings.evidence_budget
        reads_whole = self.settings.whole_history and self.ablations.clear_memory
        tools = MemoryTools(
            profile.viewer, self.memory, self.ablations, cache=self.searches,
            whole_budget=Budget(budget).act_notebook if reads_whole else 0,
        )  # fmt: skip
        return Agent(
            profile, llm=self.llm, tools=tools, infonav=self.ablations.infonav, plan=plan,
            private_llm=self.memory.reader, budget=budget, grounding=self.grounding,
            # Only the requester's agents read the blackboard: a colleague's agent never sees what another
            # colleague's agent told the requester's.
            blackboard=self.blackboard if profile.handle == self.requester else None,
            privacy_prompt=self.settings.agent_privacy_prompt,
        )  # fmt: skip
