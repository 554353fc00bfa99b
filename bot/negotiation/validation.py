"""Per-turn validation: a move is checked before it is delivered, and a failure becomes feedback for the proposer.

Rules for a proposal: it parses; every id names an atomic task; give is a subset of the proposer's holdings; take is
a subset of the counterpart's; give and take are disjoint; it is not empty. An ACCEPT needs a proposal from the
counterpart on the table. All problems of a move are reported at once, so one retry can fix them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.base.prompts import render_prompt
from bot.negotiation.model import Allocation, Proposal, Scenario
from bot.negotiation.protocol import Move, MoveKind, ParseProblem


@dataclass(frozen=True)
class Verdict:
    move: Move | None  # the move with task ids made canonical; None when it did not parse
    feedback: tuple[str, ...] = field(default_factory=tuple)  # empty = valid

    @property
    def ok(self) -> bool:
        return not self.feedback

    @property
    def text(self) -> str:
        return " ".join(self.feedback)


def feedback(key: str, **variables: object) -> str:
    return render_prompt("negotiation", f"feedback_{key}", **variables)


def validate_move(
    parsed: Move | ParseProblem, *, scenario: Scenario, allocation: Allocation, mover: str, table: Proposal | None
) -> Verdict:
    if isinstance(parsed, ParseProblem):
        return Verdict(None, (feedback(parsed.value),))
    if parsed.kind is MoveKind.ACCEPT and table is None:
        return Verdict(parsed, (feedback("nothing_to_accept", counterpart=scenario.counterpart(mover)),))
    if parsed.kind is not MoveKind.PROPOSE or parsed.proposal is None:
        return Verdict(parsed)
    proposal, problems = check_proposal(parsed.proposal, scenario=scenario, allocation=allocation, proposer=mover)
    return Verdict(Move(parsed.kind, parsed.text, proposal), problems)


def check_proposal(
    proposal: Proposal, *, scenario: Scenario, allocation: Allocation, proposer: str
) -> tuple[Proposal, tuple[str, ...]]:
    """The proposal with canonical ids, and the feedback for every rule it breaks (empty when valid)."""
    counterpart = scenario.counterpart(proposer)
    give, unknown_give = _resolve(scenario, proposal.give)
    take, unknown_take = _resolve(scenario, proposal.take)
    problems: list[str] = []
    if not proposal.give and not proposal.take:
        problems.append(feedback("empty"))
    unknown = unknown_give + unknown_take
    if unknown:
        problems.append(feedback("unknown_tasks", tasks=unknown, known=list(scenario.task_ids)))
    both = [t for t in give if t in take]
    if both:
        problems.append(feedback("overlap", tasks=both))
    mine, theirs = allocation.holdings(proposer), allocation.holdings(counterpart)
    not_mine = [t for t in give if t not in mine and t not in both]
    if not_mine:
        problems.append(feedback("not_yours", tasks=not_mine, held=list(mine)))
    not_theirs = [t for t in take if t not in theirs and t not in both]
    if not_theirs:
        problems.append(feedback("not_theirs", tasks=not_theirs, held=list(theirs), counterpart=counterpart))
    return Proposal(give, take), tuple(problems)


def _resolve(scenario: Scenario, written: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """Canonical ids for ids (or task names) as an agent wrote them, case-insensitively; and those that match none."""
    lookup = {task.id.casefold(): task.id for task in scenario.tasks}
    for task in scenario.tasks:
        lookup.setdefault(task.name.casefold(), task.id)
    resolved, unknown = [], []
    for item in written:
        canonical = lookup.get(item.casefold())
        if canonical is None:
            unknown.append(item)
        elif canonical not in resolved:
            resolved.append(canonical)
    return tuple(resolved), unknown


def is_executable(proposal: Proposal | None, *, scenario: Scenario, allocation: Allocation, proposer: str) -> bool:
    """Whether a trade can be carried out as written (used when validation is switched off)."""
    if proposal is None:
        return False
    _, problems = check_proposal(proposal, scenario=scenario, allocation=allocation, proposer=proposer)
    return not problems
