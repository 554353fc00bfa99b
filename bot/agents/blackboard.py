"""The blackboard of a multi-party ask: what the concurrent 1:1 conversations have learned, for all of them.

Every shared turn of a top-level conversation publishes the rationales it solved (rationale, value, source, who said
it); each conversation's agents see what the others published, and the list of everyone asked, so no branch hunts
for what another already has. Branches still run concurrently: publishing is a list append, never a wait.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.agents.plan import Plan


@dataclass(frozen=True)
class Posting:
    branch: str  # the colleague of the conversation that published it
    agent: str  # handle of the agent whose plan holds it
    need: str
    value: str
    source: str

    def line(self) -> str:
        who = f"from {self.agent}'s agent, talking with {self.branch}"
        return f"{self.need}: {self.value} [{self.source or '-'}] ({who})"

    def dict(self) -> dict[str, str]:
        return dict(self.__dict__)


@dataclass
class Blackboard:
    asked: tuple[str, ...] = ()  # everyone asked in this ask
    postings: list[Posting] = field(default_factory=list)

    def publish(self, *, branch: str, agent: str, plan: Plan, solved: list[str]) -> list[dict[str, str]]:
        fresh = []
        for rationale in (r for r in (plan.get(i) for i in solved) if r is not None):
            posting = Posting(branch, agent, rationale.need, rationale.value, rationale.source)
            if posting not in self.postings:
                self.postings.append(posting)
                fresh.append(posting.dict())
        return fresh

    def restore(self, published: list[dict[str, str]]) -> None:
        for raw in published:
            posting = Posting(**{k: str(raw.get(k, "")) for k in Posting.__dataclass_fields__})
            if posting not in self.postings:
                self.postings.append(posting)

    def lines_for(self, branch: str) -> list[str]:
        """What the other conversations published (this one's own facts are in its own plan already)."""
        return [p.line() for p in self.postings if p.branch != branch]

    def lines(self) -> list[str]:
        return [p.line() for p in self.postings]
