"""InfoNav: the plan of rationales an agent needs, made from the question and filled in during the conversation.

    plan = Plan.from_dicts(think["plan"])          # first think call proposes it, all unknown
    update = plan.learn([Fact("r1", "Room 4B", "m12")])
    update.solved == ["r1"]; plan.is_complete

A rationale marked known whose value says it is not known ("unknown", "n/a", "?") is "fake solved": the paper
counts these hallucinations and so do we, for the report. No value is ever deleted or demoted by a pattern: the
model states each rationale's status itself, and a negative answer ("none after 5pm", "Joey didn't find the ring")
is a fact like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


MAX_RATIONALES = 8
MAX_VALUE_CHARS = 300

# A value that is only a placeholder for "I do not know" (the whole value, not a word inside a real answer).
_FAKE_SOLVED = re.compile(
    r"^\W*(unknown|unclear|n/?a|tbd|tba|\?+|not (yet )?(known|found|mentioned|specified|available|provided)( yet)?"
    r"|(i )?(could not|couldn't|cannot|can't) find( it)?|no (information|info|data)( found)?|(i )?(don't|do not) know"
    r")?\W*$",
    re.IGNORECASE,
)


class Status(StrEnum):
    UNKNOWN = "unknown"
    KNOWN = "known"


def says_unknown(value: str) -> bool:
    """Whether a value claims knowledge while saying there is none (the paper's "fake solved"); counted only."""
    return bool(_FAKE_SOLVED.match(value.strip()))


@dataclass
class Rationale:
    id: str
    need: str
    status: Status = Status.UNKNOWN
    value: str = ""
    source: str = ""  # message ids, "session:<key>", or "<member>" for what a colleague's agent said

    def dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "need": self.need,
            "status": str(self.status),
            "value": self.value,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Rationale:
        status = Status.KNOWN if str(raw.get("status", "")).lower() == "known" else Status.UNKNOWN
        return cls(
            id=str(raw.get("id", "")).strip(),
            need=str(raw.get("need", "")).strip(),
            status=status,
            value=str(raw.get("value") or "").strip()[:MAX_VALUE_CHARS],
            source=str(raw.get("source") or "").strip(),
        )


@dataclass(frozen=True)
class Fact:
    """A value the act call found for one rationale, with where it came from."""

    id: str
    value: str
    source: str = ""
    status: str = "known"  # the model's own statement: "unknown" = still looking (the value is a partial note)


@dataclass
class PlanUpdate:
    solved: list[str] = field(default_factory=list)  # ids that went unknown -> known in this update
    fake_solved: list[str] = field(default_factory=list)  # ids claimed known with an "unknown" value (kept, counted)

    def merge(self, other: PlanUpdate) -> PlanUpdate:
        return PlanUpdate(self.solved + other.solved, self.fake_solved + other.fake_solved)

    def dict(self) -> dict[str, Any]:
        return {"solved": list(self.solved), "fake_solved": list(self.fake_solved)}


@dataclass
class Plan:
    rationales: list[Rationale] = field(default_factory=list)

    # ------------------------------------------------------------------ reading
    @property
    def unknowns(self) -> list[Rationale]:
        return [r for r in self.rationales if r.status is Status.UNKNOWN]

    @property
    def known(self) -> list[Rationale]:
        return [r for r in self.rationales if r.status is Status.KNOWN]

    @property
    def is_complete(self) -> bool:
        return bool(self.rationales) and not self.unknowns

    def get(self, rationale_id: str) -> Rationale | None:
        return next((r for r in self.rationales if r.id == rationale_id), None)

    # ------------------------------------------------------------------ updating
    def revise(self, proposed: list[Rationale]) -> PlanUpdate:
        """Take the plan the think call wrote (the whole plan, as the model now sees it)."""
        before = {r.id for r in self.known}
        kept = [r for r in proposed if r.id and r.need][:MAX_RATIONALES]
        if not kept and self.rationales:
            return PlanUpdate()  # an empty proposal never wipes a plan
        claimed = [r for r in kept if r.status is Status.KNOWN and r.id not in before]
        update = PlanUpdate(
            solved=[r.id for r in claimed if not says_unknown(r.value)],
            fake_solved=[r.id for r in claimed if says_unknown(r.value)],
        )
        self.rationales = kept
        return update

    def learn(self, facts: list[Fact]) -> PlanUpdate:
        """Fill rationales from facts the act call found in memory or in what other agents said."""
        update = PlanUpdate()
        for fact in facts:
            rationale = self.get(fact.id)
            if rationale is None or rationale.status is Status.KNOWN or fact.status != "known":
                continue
            rationale.status, rationale.value = Status.KNOWN, fact.value.strip()[:MAX_VALUE_CHARS]
            rationale.source = fact.source
            (update.fake_solved if says_unknown(fact.value) else update.solved).append(fact.id)
        return update

    def copy(self) -> Plan:
        return Plan([Rationale(**r.__dict__) for r in self.rationales])

    # ------------------------------------------------------------------ serialising
    def dict(self) -> list[dict[str, Any]]:
        return [r.dict() for r in self.rationales]

    @classmethod
    def from_dicts(cls, raw: list[dict[str, Any]] | None) -> Plan:
        return cls([Rationale.from_dict(r) for r in raw or [] if isinstance(r, dict)])
