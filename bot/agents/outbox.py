"""The one way out of a member's agent: every text it passes on goes through `Outbox.send`.

Turns (utterance, plan values, learned facts, answer), closing statements and the question an agent writes to bring
in a third member all leave through here; what a later turn derives from them was itself sent. At the moment of
sending the outbox reads the member's policy and memory switch from the database (a change made in any process
applies to the next send), screens the text (`bot.agents.sharing`: facts tied to the question, memory text compared
normalised, a per-ask cap), asks an `ask` member to approve that exact text (`bot.agents.privacy`), and records
what left, to whom and under which policy (`Sent`, also kept on the step for the transcript and the sharing log).

    outbox = Outbox(roster, approvals, screen=ShareScreen(cap=2000), audience=Audience("alice", ("bob",), "#general"))
    verdict = await outbox.send(agent, step, turns, conversation_id=7)  # Verdict.SENT | HELD | NOTHING

Under `never`, or with memory off, nothing leaves. The requester's own agent is screened but never asked: asking
is their consent to share, within the question, what their agent found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.agents.agent import Agent
from bot.agents.outgoing import Outgoing, source_label
from bot.agents.privacy import Approval, SharingGate
from bot.agents.roster import MemberProfile, Roster
from bot.agents.sharing import Shareable, ShareScreen
from bot.agents.steps import StatementStep, TurnStep
from bot.port import SharePolicy
from bot.text_fold import skeleton


_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(r"[.!?;:\n]+")
_CITATION = re.compile(r"\[[^\]\s]*\d[^\]\s]*\]")  # "[m0000007]", "[alice:m0000001]": ids agents cite by


class Verdict(StrEnum):
    SENT = "sent"  # it left (screened; approved when the policy asks)
    HELD = "held"  # nothing of it left: policy never, memory off, or not approved
    NOTHING = "nothing"  # the screen left nothing of the member's memory to send (statements only)


@dataclass(frozen=True)
class Audience:
    """Who can read what a member's agent passes on in one ask: the requester (their agent, the answer), the other
    colleagues asked (the requester's agent tells them what it learned), the member who brought this one in, and
    everyone in the channel where the answer is posted."""

    requester: str
    colleagues: tuple[str, ...] = ()
    channel: str | None = None  # "#name" of the channel the answer is posted in; None: a DM to the requester

    def of(self, member: str, *, recruiter: str | None = None, partner: str | None = None) -> list[str]:
        """The audience of `member`'s agent talking with `partner`'s, as handles and "#channel"."""
        people = [p for p in (partner, self.requester, *self.colleagues, recruiter) if p]
        seen = [p for i, p in enumerate(people) if p != member and p not in people[:i]]
        return [*seen, self.channel] if self.channel else seen


@dataclass
class Sent:
    """One record of the outbox: exactly what left a member's agent (or was held), to whom, and why."""

    member: str
    kind: str  # turn | statement | recruit
    conversation_id: int
    policy: str  # the member's policy at the moment of sending (or "requester")
    verdict: Verdict
    text: str  # exactly what left ("" when held)
    audience: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # memory lines the text rests on, as the agent read them
    approval: str | None = None  # approved | approved_all | denied | timeout | unreachable, when asked

    def dict(self) -> dict[str, Any]:
        return {**self.__dict__, "verdict": str(self.verdict)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Sent:
        known = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        return cls(**{**known, "verdict": Verdict(raw.get("verdict", Verdict.HELD))})

    def source_labels(self) -> list[str]:
        """Where the text comes from, as a person reads it (channel, time, sender; never an internal id)."""
        return list(dict.fromkeys(source_label(line) for line in self.sources))


def shared_items(records: Iterable[dict[str, Any]]) -> list[Sent]:
    """What left the members' agents of one ask, from its stored turns' and statements' data (each keeps its outbox
    record under `sharing`): for "Who contributed" and the sharing log. Held items are left out."""
    found = []
    for data in records:
        sharing = (data or {}).get("sharing") or {}
        for key in ("recruit_sent", "sent"):
            kept = sharing.get(key)
            for record in kept if isinstance(kept, list) else [kept]:  # recruit_sent: one a member brought in
                if isinstance(record, dict) and record.get("verdict") == Verdict.SENT:
                    found.append(Sent.from_dict(record))
    return found


ALL = "*"  # approved: everything the agent says in this ask (to that audience)


class Outbox:
    """The outbox of every member agent in one ask (one record list, one screen, one approval channel)."""

    def __init__(self, roster: Roster, approvals: SharingGate, *, screen: ShareScreen, audience: Audience) -> None:
        self.roster = roster
        self.approvals = approvals
        self.screen = screen
        self.audience = audience
        self.records: list[Sent] = []
        # member -> what they approved in this ask (read as `_pieces`, or ALL) and to whom it went
        self._approved: dict[str, list[tuple[str, frozenset[str]]]] = {}

    @property
    def requester(self) -> str:
        return self.audience.requester

    async def profile(self, agent: Agent) -> MemberProfile:
        """The member's settings as they are now; the agent takes them over (its next search obeys them too), and
        forgets what it read from a channel the member excluded since (`bot.agents.exclusions`)."""
        from bot.agents.exclusions import settle  # kept here: this method is the one place the outbox reads settings

        agent.profile = await settle(agent, await self.roster.profile(agent.handle))
        return agent.profile

    async def send(
        self, agent: Agent, step: Shareable, turns: list[TurnStep], *, conversation_id: int,
        question: str, recruiter: str | None = None, partner: str | None = None,
    ) -> Verdict:  # fmt: skip
        """Screen `step` in place and let it leave, or hold it; records either way."""
        profile = await self.profile(agent)
        kind = "statement" if isinstance(step, StatementStep) else "turn"
        outgoing = self.screen.turn(agent, step, turns, question=question, conversation_id=conversation_id)
        if isinstance(step, StatementStep) and not outgoing.facts:
            return Verdict.NOTHING  # no claim survived: nothing of the member's memory to send
        audience = self.audience.of(agent.handle, recruiter=recruiter, partner=partner)
        return await self._pass(agent, profile, step, outgoing, kind=kind, conversation_id=conversation_id,
                                audience=audience)  # fmt: skip

    async def send_question(
        self, agent: Agent, step: TurnStep, text: str, *, to: str, conversation_id: int, question: str
    ) -> str | None:
        """The question `agent` writes to bring in `to`'s agent, screened like an utterance; None when held. `to`
        and, through the answer, the ask's audience read it."""
        profile = await self.profile(agent)
        screened = self.screen.text(agent, text, question=question) if text != question else text
        audience = self.audience.of(agent.handle, partner=to)
        verdict = await self._pass(
            agent, profile, step, Outgoing(utterance=screened), kind="recruit", conversation_id=conversation_id,
            audience=audience, derived=text != question,
        )  # fmt: skip
        return screened if verdict is Verdict.SENT else None

    async def _pass(
        self, agent: Agent, profile: MemberProfile, step: Shareable, outgoing: Outgoing, *, kind: str,
        conversation_id: int, audience: list[str], derived: bool = True,
    ) -> Verdict:  # fmt: skip
        to = audience
        text = outgoing.text()
        sent = Sent(agent.handle, kind, conversation_id, str(profile.share), Verdict.SENT, text, to,
                    list(outgoing.cited_lines))  # fmt: skip
        if agent.handle == self.requester:
            sent.policy = "requester"
        elif not profile.can_take_part or profile.share is SharePolicy.NEVER:
            sent.verdict = Verdict.HELD
        elif profile.share is SharePolicy.ASK and derived and _from_memory(agent, step) and text:
            sent.approval = await self._approval(agent, profile, step, outgoing, to, kind, conversation_id)
            if sent.approval not in (Approval.APPROVED, Approval.APPROVED_ALL):
                sent.verdict = Verdict.HELD
        if sent.verdict is Verdict.HELD:
            sent.text, sent.sources = "", []
        self.records.append(sent)
        if kind == "recruit":  # the turn goes on: its own share is recorded later, under "sent"
            asked = [*(step.sharing or {}).get("recruit_sent", []), sent.dict()]  # a question per member brought in
            step.sharing = {**(step.sharing or {}), "recruit_sent": asked}
        else:
            step.approval = sent.approval or step.approval
            step.sharing = {**(step.sharing or {}), "sent": sent.dict()}
        return sent.verdict

    async def _approval(
        self, agent: Agent, profile: MemberProfile, step: Shareable, outgoing: Outgoing, audience: list[str],
        kind: str, conversation_id: int,
    ) -> str:  # fmt: skip
        # An approval covers what the member read and who they were told would see it: never a wider audience.
        approved = [text for text, seen_by in self._approved.get(agent.handle, []) if seen_by >= set(audience)]
        if ALL in approved:
            return Approval.APPROVED_ALL
        pieces = _pieces(outgoing.text())
        if all(any(piece in text for text in approved) for piece in pieces):
            return Approval.APPROVED  # every sentence of it was in a text approved in this ask: no second prompt
        decision = await self.approvals.ask(
            profile, step, outgoing, audience=audience, kind=kind, conversation_id=conversation_id
        )
        if decision in (Approval.APPROVED_ALL, Approval.APPROVED):
            text = ALL if decision == Approval.APPROVED_ALL else " ".join(pieces)
            self._approved.setdefault(agent.handle, []).append((text, frozenset(audience)))
        return decision

    def shared_by(self, member: str) -> list[Sent]:
        """What `member`'s agent passed on in this ask (for "Who contributed" and the sharing log)."""
        return [s for s in self.records if s.member == member and s.verdict is Verdict.SENT]


def _pieces(text: str) -> list[str]:
    """The sentences of a text as a reader takes them (look-alike letters folded, words in order), without citation
    ids or punctuation between words."""
    sentences = _SENTENCE.split(skeleton(_CITATION.sub(" ", text)))
    return [p for p in (" ".join(_WORD.findall(s)) for s in sentences) if p]


def _from_memory(agent: Agent, step: Shareable) -> bool:
    """The agent has read its member's memory in this ask (or been told by a third agent): whatever it says now may
    rest on it."""
    return bool(agent.notebook.lines or getattr(step, "evidence", None) or any(r.evidence for r in step.recruits))
