"""The negotiation loop between two agents, read top to bottom.

Turn 1: each agent reflects privately (<CONSIDER>; nothing is delivered). Turns 2..max_turns: the agents move in
turn, the first agent first. A move is validated before delivery; an invalid one is not delivered, its author gets
targeted feedback and tries again within the same turn, and the 5th invalid attempt in one turn ends the run as
Error. ACCEPT carries out exactly the last valid proposal on the table. With no agreement, or after an Error, the
initial allocation stands.

With validation switched off (a baseline) every move is delivered as written. An ACCEPT of a proposal that cannot be
carried out (unknown ids, tasks the proposer does not hold), or of nothing at all, ends the run as Error: the agents
"agreed" on a trade that does not exist.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.base.prompts import render_prompt
from bot.errors import LLMOutputError
from bot.llm.client import LLMClient
from bot.llm.types import LLMCallRecord, LLMRequest, Messages
from bot.negotiation.model import Allocation, Proposal, Scenario
from bot.negotiation.pareto import OutcomeSpace, outcome_space
from bot.negotiation.protocol import Move, MoveKind, parse_consideration, parse_move
from bot.negotiation.transcript import Attempt, NegotiationOptions, NegotiationResult, Outcome, Phase, Turn
from bot.negotiation.validation import feedback, is_executable, validate_move


REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string"},
        "counterpart_utility_estimate": {"type": "number"},  # 0..1, clamped on reading (not every endpoint
        # accepts numeric bounds in a schema)
    },
    "required": ["message", "counterpart_utility_estimate"],
    "additionalProperties": False,
}


@dataclass
class _Table:
    """The proposal currently on offer and who made it."""

    proposal: Proposal
    proposer: str
    executable: bool


class NegotiationEngine:
    def __init__(
        self,
        scenario: Scenario,
        clients: Mapping[str, LLMClient],
        *,
        options: NegotiationOptions | None = None,
        space: OutcomeSpace | None = None,
    ) -> None:
        self.scenario = scenario
        self.clients = dict(clients)
        self.options = options or NegotiationOptions()
        self.space = space
        self.turns: list[Turn] = []
        self.table: _Table | None = None

    async def run(self) -> NegotiationResult:
        await self._consider()
        for number in range(2, self.options.max_turns + 1):
            agent = self.scenario.agents[number % 2]
            turn = await self._move_turn(number, agent)
            if not turn.delivered:
                return self._finish(Outcome.ERROR, number, error=f"{agent} made {turn.invalid_attempts} invalid moves")
            move = turn.final.move if turn.final else None
            if move is not None and move.kind is MoveKind.ACCEPT:
                return self._accept(agent, number)
            self._update_table(agent, move)
        return self._finish(Outcome.NO_AGREEMENT, self.options.max_turns)

    # ------------------------------------------------------------------ turns
    async def _consider(self) -> None:
        agents = self.scenario.agents
        turns = [Turn(1, agent, Phase.CONSIDER, self._instruction("consider", agent)) for agent in agents]
        self.turns.extend(turns)
        attempts = await asyncio.gather(*(self._ask(turn, "negotiation.consider") for turn in turns))
        for turn, attempt in zip(turns, attempts, strict=True):
            if attempt.move is None and not attempt.feedback:
                attempt.message = parse_consideration(attempt.message)
            turn.attempts.append(attempt)

    async def _move_turn(self, number: int, agent: str) -> Turn:
        instruction = self._instruction("turn", agent, turn=number, table=self._table_for(agent))
        turn = Turn(number, agent, Phase.MOVE, instruction)
        self.turns.append(turn)
        while turn.invalid_attempts < self.options.max_invalid_per_turn:
            attempt = await self._ask(turn, "negotiation.turn")
            turn.attempts.append(attempt)
            if attempt.valid:
                turn.delivered = True
                break
            limit = self.options.max_invalid_per_turn
            if turn.invalid_attempts < limit:
                retry = feedback("retry", attempt=turn.invalid_attempts, limit=limit)
                attempt.feedback = f"{attempt.feedback}\n{retry}"
        return turn

    async def _ask(self, turn: Turn, purpose: str) -> Attempt:
        request = LLMRequest(self._messages(turn.agent), purpose=purpose, json_schema=REPLY_SCHEMA)
        try:
            result = await self.clients[turn.agent].complete(request)
        except LLMOutputError as exc:
            call = exc.call or LLMCallRecord(purpose=purpose, model=self.clients[turn.agent].model, error=str(exc))
            return Attempt("", "", None, None, call, feedback=feedback("bad_output"))
        message, estimate = _read_reply(result.data)
        if message is None:
            return Attempt(result.text, "", None, None, result.call, feedback=feedback("bad_output"))
        attempt = Attempt(result.text, message, estimate, None, result.call)
        if turn.phase is Phase.MOVE:
            self._judge(attempt, turn.agent)
        attempt.estimate_target = self._estimate_target(turn.agent, attempt.move)
        return attempt

    def _judge(self, attempt: Attempt, agent: str) -> None:
        """Parse and validate a move; with validation off the verdict is ignored and the move goes out as written."""
        parsed = parse_move(attempt.message)
        table = self.table.proposal if self.table else None
        verdict = validate_move(
            parsed, scenario=self.scenario, allocation=self.scenario.initial, mover=agent, table=table
        )
        if self.options.validate:
            attempt.move, attempt.feedback = verdict.move, verdict.text
        else:
            attempt.move = verdict.move if verdict.ok else (parsed if isinstance(parsed, Move) else None)

    # ------------------------------------------------------------------ state
    def _update_table(self, agent: str, move: Move | None) -> None:
        if move is None:  # an unparseable message delivered without validation changes nothing
            return
        if move.kind is MoveKind.PROPOSE and move.proposal is not None:
            executable = is_executable(
                move.proposal, scenario=self.scenario, allocation=self.scenario.initial, proposer=agent
            )
            self.table = _Table(move.proposal, agent, executable)
        elif move.kind is MoveKind.REJECT:
            self.table = None

    def _accept(self, agent: str, number: int) -> NegotiationResult:
        table = self.table
        if table is None or table.proposer == agent or not table.executable:
            return self._finish(Outcome.ERROR, number, error=f"{agent} accepted a trade that cannot be carried out")
        counterpart = self.scenario.counterpart(table.proposer)
        final = self.scenario.initial.apply(table.proposal, table.proposer, counterpart)
        return self._finish(Outcome.AGREEMENT, number, allocation=final, agreed=table)

    def _finish(
        self,
        outcome: Outcome,
        turns_played: int,
        *,
        allocation: Allocation | None = None,
        agreed: _Table | None = None,
        error: str = "",
    ) -> NegotiationResult:
        final = allocation or self.scenario.initial
        utilities = self.scenario.utilities(final)
        space = self.space or outcome_space(self.scenario)
        return NegotiationResult(
            scenario=self.scenario,
            options=self.options,
            turns=self.turns,
            outcome=outcome,
            allocation=final,
            turns_played=turns_played,
            agreed=agreed.proposal if agreed else None,
            proposer=agreed.proposer if agreed else None,
            error=error,
            utilities=utilities,
            l2_to_pareto=space.distance_to_frontier(utilities),
            model=next(iter(self.clients.values())).model,
        )

    # ------------------------------------------------------------------ prompts
    def _messages(self, agent: str) -> Messages:
        system = render_prompt("negotiation", "system", **self._system_vars(agent))
        messages: Messages = [{"role": "system", "content": system}]
        for turn in self.turns:
            messages.extend(turn.to_messages(agent))
        return messages

    def _system_vars(self, agent: str) -> dict[str, Any]:
        prefs = self.scenario.preferences[agent]
        tasks = [
            {
                "id": task.id,
                "name": task.name,
                "parent": task.parent,
                "holder": self.scenario.initial.holder[task.id],
                "value": f"{prefs[task.id].value:g}",
                "cost": f"{prefs[task.id].cost:g}",
                "net": f"{prefs[task.id].net:+g}",
            }
            for task in self.scenario.tasks
        ]
        return {
            "agent": agent,
            "counterpart": self.scenario.counterpart(agent),
            "tasks": tasks,
            "max_turns": self.options.max_turns,
            "utility_aware": self.options.utility_aware,
        }

    def _instruction(self, key: str, agent: str, **variables: Any) -> str:
        counterpart = self.scenario.counterpart(agent)
        return render_prompt(
            "negotiation", key, counterpart=counterpart, max_turns=self.options.max_turns, **variables
        )

    def _table_for(self, agent: str) -> dict[str, Any] | None:
        if self.table is None or self.table.proposer == agent:
            return None
        # The table is written from the proposer's side; the mover receives `give` and hands over `take`.
        return {"give": list(self.table.proposal.give), "take": list(self.table.proposal.take)}

    def _estimate_target(self, agent: str, move: Move | None) -> float | None:
        """The counterpart's true utility of the allocation an estimate is about (None if it cannot exist)."""
        counterpart = self.scenario.counterpart(agent)
        trade: tuple[Proposal, str] | None = None
        if move is not None and move.kind is MoveKind.PROPOSE and move.proposal is not None:
            trade = (move.proposal, agent)
        elif move is not None and move.kind is MoveKind.ACCEPT and self.table is not None:
            trade = (self.table.proposal, self.table.proposer)
        if trade is None:
            return self.scenario.utility(counterpart, self.scenario.initial)
        proposal, proposer = trade
        if not is_executable(proposal, scenario=self.scenario, allocation=self.scenario.initial, proposer=proposer):
            return None
        after = self.scenario.initial.apply(proposal, proposer, self.scenario.counterpart(proposer))
        return self.scenario.utility(counterpart, after)


def _read_reply(data: dict[str, Any] | None) -> tuple[str | None, float | None]:
    """The tagged message and the utility estimate from a structured answer (None message = wrong shape)."""
    if not isinstance(data, dict) or not isinstance(data.get("message"), str):
        return None, None
    estimate = data.get("counterpart_utility_estimate")
    if isinstance(estimate, bool) or not isinstance(estimate, int | float):
        return data["message"], None
    return data["message"], min(1.0, max(0.0, float(estimate)))
