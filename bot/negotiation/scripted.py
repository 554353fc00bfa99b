"""A scripted negotiator: a fixed, deterministic policy that plays one agent through `ScriptedBackend`.

It exists for tests and the offline CI bench, so the whole pipeline (prompts, parsing, validation, the Error rule,
metrics, recording) runs without a model. Its results measure this script, never a language model's quality.

Policy: accept a proposal when it raises my utility; otherwise (reject and) propose the next single-task trade that
raises my utility most, starting with "give my lowest-net task, take the counterpart's task I value most", nudged
toward tasks the counterpart has revealed it wants (it asked for them) or dislikes (it offered them). Like a real
agent it knows only its own values and the public holdings; it reads the counterpart's moves from its messages.

Fault modes make it write invalid proposals (a task it does not hold, an unknown id, an empty trade), to exercise
validation and the five-invalid-proposals Error rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from bot.base.prompts import render_prompt
from bot.llm.types import LLMRequest, Messages
from bot.negotiation.model import Proposal, Scenario, normalised_utility
from bot.negotiation.protocol import Move, MoveKind, parse_move, render_proposal


@dataclass(frozen=True)
class FaultPlan:
    burst: int = 0  # the first `burst` proposal-phase answers are invalid proposals
    rate: float = 0.0  # after the burst, each proposal-phase answer is invalid with this probability


class ScriptedNegotiator:
    def __init__(self, scenario: Scenario, agent: str, *, faults: FaultPlan | None = None, seed: int = 0) -> None:
        self.scenario = scenario
        self.agent = agent
        self.counterpart = scenario.counterpart(agent)
        self.faults = faults or FaultPlan()
        self.rng = np.random.default_rng([seed, scenario.agents.index(agent)])
        self.mine = set(scenario.initial.holdings(agent))
        self.theirs = set(scenario.initial.holdings(self.counterpart))
        self.proposed: list[Proposal] = []
        self.revealed: dict[str, float] = {}  # task -> +1 the counterpart wants it, -1 it wants rid of it
        self.turn_answers = 0

    def __call__(self, request: LLMRequest) -> str:
        if request.purpose == "negotiation.consider":
            return self._answer(self._consideration(), 0.5)
        self.turn_answers += 1
        last = self._counterpart_last_move(request.messages)
        if last is not None and last.proposal is not None and last.kind is MoveKind.PROPOSE:
            self._learn(last.proposal)
            if self._my_utility_after(last.proposal, proposer=self.counterpart) > self._my_utility_now():
                return self._answer("<ACCEPT>That works for me.</ACCEPT>", self._estimate(last.proposal, True))
        proposal = self._next_proposal()
        prefix = "<REJECT>That does not work for me.</REJECT>" if last is not None else ""
        if proposal is None:
            return self._answer(prefix or "<REJECT>I have nothing to offer.</REJECT>", 0.5)
        if self._faulty():
            return self._answer(prefix + render_proposal(self._corrupt(proposal)), 0.5)
        self.proposed.append(proposal)
        return self._answer(
            prefix + render_proposal(proposal, "A trade that should suit us both."), self._estimate(proposal, False)
        )

    # ------------------------------------------------------------------ reading
    def _counterpart_last_move(self, messages: Messages) -> Move | None:
        marker = render_prompt("negotiation", "counterpart_move", counterpart=self.counterpart, utterance="")
        for message in reversed(messages):
            if message["role"] == "user" and message["content"].startswith(marker):
                parsed = parse_move(message["content"])
                return parsed if isinstance(parsed, Move) else None
        return None

    def _learn(self, proposal: Proposal) -> None:
        for task in proposal.take:
            self.revealed[task] = 1.0
        for task in proposal.give:
            self.revealed[task] = -1.0

    # ------------------------------------------------------------------ utilities (my own only)
    def _my_utility(self, held: set[str]) -> float:
        ids = self.scenario.task_ids
        return normalised_utility(self.scenario.weights(self.agent), [t in held for t in ids])

    def _my_utility_now(self) -> float:
        return self._my_utility(self.mine)

    def _my_utility_after(self, proposal: Proposal, *, proposer: str) -> float:
        """Taken at face value, as an agent that does not check the proposal would read it."""
        gained, lost = (proposal.take, proposal.give) if proposer == self.agent else (proposal.give, proposal.take)
        return self._my_utility((self.mine - set(lost)) | set(gained))

    # ------------------------------------------------------------------ proposing
    def _next_proposal(self) -> Proposal | None:
        scored = [(self._score(p), i, p) for i, p in enumerate(self._candidates()) if p not in self.proposed]
        scored = [item for item in scored if item[0] > 0]
        return max(scored, key=lambda item: (item[0], -item[1]))[2] if scored else None

    def _candidates(self) -> list[Proposal]:
        # Sorted by (net, id), never by set order, so a run is the same under every hash seed.
        mine = sorted(self.mine, key=lambda t: (self.scenario.net(self.agent, t), t))
        theirs = sorted(self.theirs, key=lambda t: (-self.scenario.net(self.agent, t), t))
        swaps = [Proposal((g,), (t,)) for g in mine for t in theirs]
        return swaps + [Proposal((g,), ()) for g in mine] + [Proposal((), (t,)) for t in theirs]

    def _score(self, proposal: Proposal) -> float:
        gain = self._my_utility_after(proposal, proposer=self.agent) - self._my_utility_now()
        if gain <= 0:
            return 0.0
        hint = sum(self.revealed.get(t, 0.0) for t in proposal.give) - sum(
            self.revealed.get(t, 0.0) for t in proposal.take
        )
        return gain + 0.05 * hint + float(self.rng.uniform(0, 0.02))

    def _estimate(self, proposal: Proposal, accepting: bool) -> float:
        """A crude guess of the counterpart's utility from what it has revealed."""
        they_get, they_lose = (proposal.take, proposal.give) if accepting else (proposal.give, proposal.take)
        signal = sum(self.revealed.get(t, 0.0) for t in they_get) - sum(self.revealed.get(t, 0.0) for t in they_lose)
        return float(min(1.0, max(0.0, 0.5 + 0.1 * signal)))

    # ------------------------------------------------------------------ faults
    def _faulty(self) -> bool:
        if self.turn_answers <= self.faults.burst:
            return True
        return self.faults.rate > 0 and float(self.rng.random()) < self.faults.rate

    def _corrupt(self, proposal: Proposal) -> Proposal:
        kind = int(self.rng.integers(3))
        if kind == 0 and self.theirs:  # hand over a task I do not hold
            return Proposal(proposal.give + (sorted(self.theirs)[0],), proposal.take)
        if kind == 1:  # a task that does not exist
            return Proposal(proposal.give + ("TASK-X",), proposal.take)
        return Proposal((), ())

    def _consideration(self) -> str:
        worst = min(self.mine, key=lambda t: (self.scenario.net(self.agent, t), t)) if self.mine else "nothing"
        return f"<CONSIDER>My least rewarding task is {worst}; maybe {self.counterpart} can take it.</CONSIDER>"

    @staticmethod
    def _answer(message: str, estimate: float) -> str:
        return json.dumps({"message": message, "counterpart_utility_estimate": round(estimate, 3)})
