"""The paper's behaviour metrics (iAgents section 6.3), computed from a transcript.

- rationales per plan: rationales in each agent's final plan, averaged;
- solved per update: rationales turned unknown -> known by one plan update (turns that solved any), averaged;
- solved ratio: known / all rationales in the final plans;
- fake-solved ratio: "known but says unknown" claims / all claims of known (real + fake);
- consensus ratio: rationales the final answer keeps / known rationales offered to consensus;
- memory parameter changes: how often an agent's next query of a kind widened, narrowed or kept its parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.asks.read_models.transcripts import Transcript


@dataclass
class Behaviour:
    rationales_per_plan: float | None = None
    solved_per_update: float | None = None
    solved_ratio: float | None = None
    fake_solved_ratio: float | None = None
    consensus_ratio: float | None = None
    parameter_changes: dict[str, dict[str, int]] = field(default_factory=dict)

    def dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def behaviour(transcript: Transcript) -> Behaviour:
    final_plans: dict[tuple[int, str], list[dict[str, Any]]] = {}
    solved_updates, solved, fake = [], 0, 0
    for view in transcript.all_conversations():
        for turn in view.turns:
            if turn.plan:
                final_plans[(view.row.id, turn.agent)] = turn.plan
            if turn.solved:
                solved_updates.append(turn.solved)
            solved += turn.solved
            fake += turn.fake_solved
    plans = list(final_plans.values())
    total = sum(len(p) for p in plans)
    known = sum(1 for p in plans for r in p if r.get("status") == "known")
    return Behaviour(
        rationales_per_plan=total / len(plans) if plans else None,
        solved_per_update=sum(solved_updates) / len(solved_updates) if solved_updates else None,
        solved_ratio=known / total if total else None,
        fake_solved_ratio=fake / (solved + fake) if solved + fake else None,
        consensus_ratio=transcript.consensus.ratio if transcript.consensus else None,
        parameter_changes=_parameter_changes(transcript),
    )


def _parameter_changes(transcript: Transcript) -> dict[str, dict[str, int]]:
    """For each parameter, how often an agent's next query of the same kind increased, decreased or kept it."""
    counts: dict[str, dict[str, int]] = {}
    for view in transcript.all_conversations():
        last: dict[tuple[str, str], dict[str, float]] = {}
        for turn in view.turns:
            for query in view.queries.get(turn.id, []):
                now = _sizes(query.kind, query.params)
                before = last.get((turn.agent, query.kind))
                if before is not None:
                    for name, value in now.items():
                        counts.setdefault(name, {"increase": 0, "decrease": 0, "same": 0})[
                            _direction(before[name], value)
                        ] += 1
                last[(turn.agent, query.kind)] = now
    return counts


def _direction(before: float, after: float) -> str:
    return "same" if after == before else "increase" if after > before else "decrease"


def _sizes(kind: str, params: dict[str, Any]) -> dict[str, float]:
    if kind == "clear":
        return {
            "clear.keywords": len(params.get("keywords") or []),
            "clear.context_window": params.get("context_window") or 0,
            "clear.limit": params.get("limit") or 0,
        }
    return {"fuzzy.top_k": params.get("top_k") or 0, "fuzzy.text_length": len(params.get("text") or "")}
