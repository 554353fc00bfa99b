"""The one way out of a member's agent: every text it passes on goes through `Outbox.send`.

Turns (utterance, plan values, learned facts, answer), closing statements and the question an agent writes to bring
in a third member all leave through here; what a later turn derives from them was itself sent. At the moment of
sending the outbox reads the member's policy and memory switch from the database (a change made in any process
applies to the next send), screens the text (`bot.consent.screen`: facts tied to the question, memory text compared
normalised, a per-ask cap), asks an `ask` member to approve that exact text (`bot.consent.approval`), and records
what left, to whom and under which policy (`Sent`, also kept on the step for the transcript and the sharing log).

    outbox = Outbox(roster, approvals, screen=ShareScreen(cap=2000), audience=Audience("alice", ("bob",), "#general"))
    verdict = await outbox.send(agent, step, turns, conversation_id=7)  # Verdict.SENT | HELD | NOTHING

Under `never`, or with memory off, nothing leaves. The requester's own agent is screened but never asked: asking
is their consent to share, within the question, what their agent found. Words keep their owner
(`bot.consent.owners`): what a colleague's agent said, passed on by another agent to anyone who could not read it
already, and a line someone else wrote in the requester's DMs or private channels, leave only as their owner's
policy allows now (`never`: held; `ask`: the owner approves those sentences for that audience; `auto`: they leave).
An approval is reused only for the same sentences (normalised) to the same or a narrower audience.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.agents.agent import Agent
from bot.agents.roster import MemberProfile, Roster
from bot.agents.steps import StatementStep, TurnStep
from bot.consent.approval import Approval, SharingGate
from bot.consent.outgoing import Outgoing, line_text, source_label
from bot.consent.owners import RELAYED, Carried, DmLines, Owners, carrying, normalised_sentences
from bot.consent.screen import Shareable, ShareScreen
from bot.platform.port import SharePolicy


# Everything an agent says in a turn is also posted to the ask's hidden agents thread, which the workspace's admins
# can read (Slack: the members of the agents' private channel; Discord: the admin role): every audience names them.
AGENTS_THREAD = "the admins who read the agents' thread"


class Verdict(StrEnum):
    SENT = "sent"  # it left (screened; approved when the policy asks)
    HELD = "held"  # nothing of it left: policy never, memory off, or not approved
    NOTHING = "nothing"  # the screen left nothing of the member's memory to send (statements only)


@dataclass(frozen=True)
class Audience:
    """Who can read what a member's agent passes on in one ask: the requester (their agent, the answer), the other
    colleagues asked (the requester's agent tells them what it learned), the member who brought this one in, and
    everyone in the channel where the answer is posted, and the admins who read the agents' hidden thread."""

    requester: str
    colleagues: tuple[str, ...] = ()
    channel: str | None = None  # "#name" of the channel the answer is posted in; None: a DM to the requester

    def of(self, member: str, *, recruiter: str | None = None, partner: str | None = None) -> list[str]:
        """The audience of `member`'s agent talking with `partner`'s, as handles and "#channel"."""
        people = [p for p in (partner, self.requester, *self.colleagues, recruiter) if p]
        seen = [p for i, p in enumerate(people) if p != member and p not in people[:i]]
        return [*seen, *([self.channel] if self.channel else []), AGENTS_THREAD]


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
    owners: dict[str, str] = field(default_factory=dict)  # whose words it passes on -> their policy or decision

    def dict(self) -> dict[str, Any]:
        return {**self.__dict__, "verdict": str(self.verdict)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Sent:
        known = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
        return cls(**{**known, "verdict": Verdict(raw.get("verdict", Verdict.HELD))})

    @property
    def held_for_others(self) -> bool:
        """Held although its member let it go (their policy, approval or no approval needed): for the words of
        others it carries (`owners`), not for the member's own say."""
        own_ok = self.policy in ("requester", "auto") or self.approval in ("approved", "approved_all")
        return self.verdict is Verdict.HELD and own_ok and any(self.owners.values())

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


UNASKED = "unasked"  # an owner not asked: their sentences also carry words of others they never read (held)
ALL_SENTENCES = frozenset({"*"})  # approved: everything the agent says in this ask (to that audience)


class Outbox:
    """The outbox of every member agent in one ask (one record list, one screen, one approval channel)."""

    def __init__(self, roster: Roster, approvals: SharingGate, *, screen: ShareScreen, audience: Audience) -> None:
        self.roster = roster
        self.approvals = approvals
        self.screen = screen
        self.audience = audience
        self.records: list[Sent] = []
        # member -> what they approved in this ask (normalised sentences, or ALL) and to whom it went
        self._approved: dict[str, list[tuple[frozenset[str], frozenset[str]]]] = {}
        self.owners = Owners()  # whose words the texts of this ask carry (what left, the requester's DM lines)
        self.dm_lines = DmLines(roster, audience.requester, self.owners)  # the requester's DM partners' lines

    @property
    def requester(self) -> str:
        return self.audience.requester

    async def profile(self, agent: Agent) -> MemberProfile:
        """The member's settings as they are now; the agent takes them over (its next search obeys them too), and
        forgets what it read from a channel the member excluded since (`bot.consent.exclusions`)."""
        from bot.consent.exclusions import settle  # kept here: this method is the one place the outbox reads settings

        agent.profile = await settle(agent, await self.roster.profile(agent.handle))
        return agent.profile

    async def send(
        self, agent: Agent, step: Shareable, turns: list[TurnStep], *, conversation_id: int,
        question: str, recruiter: str | None = None, partner: str | None = None,
    ) -> Verdict:  # fmt: skip
        """Screen `step` in place and let it leave, or hold it; records either way."""
        profile = await self.profile(agent)
        kind = "statement" if isinstance(step, StatementStep) else "turn"
        withheld = await self.dm_lines.withheld(agent)
        outgoing = self.screen.turn(agent, step, turns, question=question, conversation_id=conversation_id,
                                    withheld=withheld)  # fmt: skip
        if isinstance(step, StatementStep) and not outgoing.facts:
            return Verdict.NOTHING  # no claim survived: nothing of the member's memory to send
        audience = self.audience.of(agent.handle, recruiter=recruiter, partner=partner)
        verdict = await self._pass(agent, profile, step, outgoing, kind=kind, conversation_id=conversation_id,
                                   audience=audience, question=question)  # fmt: skip
        if self.audience.channel is not None:  # the answer is written from the requester's notebooks, posted there
            await self.dm_lines.keep_to(agent, self.audience.channel)
        return verdict

    async def send_question(
        self, agent: Agent, step: TurnStep, text: str, *, to: str, conversation_id: int, question: str
    ) -> str | None:
        """The question `agent` writes to bring in `to`'s agent, screened like an utterance; None when held. `to`
        and, through the answer, the ask's audience read it. Under `ask` it is always approved, even when it is the
        ask's question word for word: that this member's agent brings `to` in is the member's to tell."""
        profile = await self.profile(agent)
        screened = self.screen.text(agent, text, question=question, withheld=await self.dm_lines.withheld(agent))
        audience = self.audience.of(agent.handle, partner=to)
        verdict = await self._pass(
            agent, profile, step, Outgoing(utterance=screened), kind="recruit", conversation_id=conversation_id,
            audience=audience, question=question,
        )  # fmt: skip
        return screened if verdict is Verdict.SENT else None

    async def _pass(
        self, agent: Agent, profile: MemberProfile, step: Shareable, outgoing: Outgoing, *, kind: str,
        conversation_id: int, audience: list[str], question: str,
    ) -> Verdict:  # fmt: skip
        to = audience
        text = outgoing.text()
        sent = Sent(agent.handle, kind, conversation_id, str(profile.share), Verdict.SENT, text, to,
                    list(outgoing.cited_lines))  # fmt: skip
        asks = kind == "recruit" or _from_memory(agent, step)  # a recruit question always tells something
        if agent.handle == self.requester:
            sent.policy = "requester"
        elif not profile.can_take_part or profile.share is SharePolicy.NEVER:
            sent.verdict = Verdict.HELD
        elif profile.share is SharePolicy.ASK and asks and text:
            sent.approval = await self._approval(profile, step, outgoing, to, kind, conversation_id)
            if sent.approval not in (Approval.APPROVED, Approval.APPROVED_ALL):
                sent.verdict = Verdict.HELD
        if sent.verdict is Verdict.SENT and text:
            await self._owners_consent(agent, sent, step, question=question)
        if sent.verdict is Verdict.HELD:
            sent.text, sent.sources = "", []
        else:
            self._remember(agent, sent, question)
        self.records.append(sent)
        if kind == "recruit":  # the turn goes on: its own share is recorded later, under "sent"
            asked = [*(step.sharing or {}).get("recruit_sent", []), sent.dict()]  # a question per member brought in
            step.sharing = {**(step.sharing or {}), "recruit_sent": asked}
        else:
            step.approval = sent.approval or step.approval
            step.sharing = {**(step.sharing or {}), "sent": sent.dict()}
        return sent.verdict

    async def _approval(
        self, profile: MemberProfile, step: Shareable, outgoing: Outgoing, audience: list[str], kind: str,
        conversation_id: int,
    ) -> str:  # fmt: skip
        """`profile`'s member approves `outgoing` for `audience`, or did already in this ask: every sentence of it
        (normalised) was in a text they approved for these people or more, or they approved everything."""
        member = profile.handle
        # An approval covers what the member read and who they were told would see it: never a wider audience.
        approved = [said for said, seen_by in self._approved.get(member, []) if seen_by >= set(audience)]
        if ALL_SENTENCES in approved:
            return Approval.APPROVED_ALL
        wanted = normalised_sentences(outgoing.text())
        if wanted <= frozenset().union(*approved):
            return Approval.APPROVED  # the same sentences to the same people or fewer: no second prompt
        decision = await self.approvals.ask(
            profile, step, outgoing, audience=audience, kind=kind, conversation_id=conversation_id
        )
        if decision in (Approval.APPROVED_ALL, Approval.APPROVED):
            said = ALL_SENTENCES if decision == Approval.APPROVED_ALL else wanted
            self._approved.setdefault(member, []).append((said, frozenset(audience)))
        return decision

    # ------------------------------------------------------------------ owners of the words passed on
    async def _owners_consent(self, agent: Agent, sent: Sent, step: Shareable, *, question: str) -> None:
        """Every owner whose words `sent` passes on to someone who could not read them yet consents now, or it is
        held."""
        carried = self.owners.carried(sent.text, known=[question, *await self._own_lines(agent)], speaker=agent.handle)
        for owner, part in carried.items():
            if not part.covers(sent.audience):
                sent.owners[owner] = decision = await self._owner_decision(part, step, sent, carried)
                if decision not in (SharePolicy.AUTO, Approval.APPROVED, Approval.APPROVED_ALL):
                    sent.verdict = Verdict.HELD
                    return
        for owner, part in carried.items():  # their words are theirs still, wherever they go next
            readers = self.owners.widen(part.keys, sent.audience)
            if self.audience.channel in readers:
                self.dm_lines.cleared |= part.keys
            for n, sentence in enumerate(part.sentences):
                self.owners.add(owner, f"via:{len(self.records)}:{owner}:{n}", sentence, readers=readers,
                                said=part.said)  # fmt: skip

    async def _owner_decision(self, part: Carried, step: Shareable, sent: Sent, carried: dict[str, Carried]) -> str:
        owner = await self.roster.profile(part.owner)  # their policy as it is now
        if owner.share is SharePolicy.NEVER or not owner.can_take_part:  # memory off: nothing of theirs leaves
            return SharePolicy.NEVER
        if owner.share is SharePolicy.AUTO:
            return SharePolicy.AUTO
        if part.mixes_unread(carried.values()):
            return UNASKED  # the prompt itself would show them others' words they never read: held
        relayed = Outgoing(utterance="\n".join(part.sentences))
        return await self._approval(owner, step, relayed, sent.audience, "relay", sent.conversation_id)

    async def _own_lines(self, agent: Agent) -> list[str]:
        """The texts of the lines `agent`'s member holds themself (for the requester: not those someone else wrote
        in their DMs and private channels, which are their authors' lines)."""
        own = [line for line in agent.notebook.lines.values() if not line.via.endswith(RELAYED)]
        authored = await self.dm_lines.authored(agent)
        return [line.text for line in own if line.id not in authored]

    def _remember(self, agent: Agent, sent: Sent, question: str) -> None:
        """What a member's agent let out stays theirs: the lines it rests on and the sentences carrying its member's
        memory (not the question's words nor the talk's set phrases), read by its audience."""
        if sent.member == self.requester:  # the requester's words are the requester's to pass on
            return
        memory = {line.id: line.text for line in agent.notebook.lines.values() if not line.via.endswith(RELAYED)}
        memory.update({f"source:{n}": line_text(line) for n, line in enumerate(sent.sources)})
        owned = carrying(sent.text, memory, known=[question])
        n = len(self.records)
        for i, sentence in enumerate(owned):
            self.owners.add(sent.member, f"sent:{n}:{i}", sentence, readers=sent.audience, said=True)
        for line in sent.sources:
            self.owners.add(sent.member, f"source:{sent.member}:{line}", line_text(line), readers=sent.audience,
                            said=True)  # fmt: skip

    def shared_by(self, member: str) -> list[Sent]:
        """What `member`'s agent passed on in this ask (for "Who contributed" and the sharing log)."""
        return [s for s in self.records if s.member == member and s.verdict is Verdict.SENT]


def _from_memory(agent: Agent, step: Shareable) -> bool:
    """The agent has read its member's memory in this ask (or been told by a third agent): whatever it says now may
    rest on it."""
    return bool(agent.notebook.lines or getattr(step, "evidence", None) or any(r.evidence for r in step.recruits))
