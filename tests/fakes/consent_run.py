"""Running consent cases over the consent workspace (`tests.fakes.consent`) and judging what reached whom."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path

from bot import messages
from bot.asks.service import AskRequest, AskService
from bot.errors import AskRejectedError
from bot.llm.client import LLMClient
from bot.port import ApprovalDecision, ApprovalRequest
from bot.settings import Settings
from bot.store.db import Database
from bot.text_fold import skeleton
from tests.fakes.asks import build
from tests.fakes.consent import (
    EXCLUDED,
    PRIVATE,
    QUESTION,
    RELEVANT,
    THREAD,
    AdversarialBackend,
    Attack,
    consent_world,
    reset_members,
)


@dataclass(frozen=True)
class Case:
    colleagues: list[str]
    route: str
    policies: dict[str, str]  # member -> share policy when the ask starts (memory on)
    change: tuple[str, str, bool] | None  # (member, policy, memory on), made by another process mid-ask
    decisions: list[ApprovalDecision]
    follow_up: bool


@dataclass
class Received:
    """What reached whom: (receiver, text); the receiver is a member, or "alice" for consensus and the answer."""

    texts: list[tuple[str, str]] = field(default_factory=list)
    asked: list[tuple[ApprovalRequest, ApprovalDecision]] = field(default_factory=list)
    asked_at: list[float] = field(default_factory=list)  # time.perf_counter() of each prompt
    crashed: bool = False  # an ask failed unexpectedly (a crash proves nothing about consent)
    agents: set[str] = field(default_factory=set)  # members whose agents took part (asked or brought in)


class Workspace:
    """One world, mirrored once; every case runs a fresh service over it (its settings reset first)."""

    def __init__(self, db: Database, settings: Settings, database_file: Path, *, elsewhere: bool) -> None:
        self.db, self.settings, self.file = db, settings, str(database_file)
        self.attack = Attack(database=self.file)
        self.backend = AdversarialBackend(self.attack, elsewhere=elsewhere)
        self.world = consent_world()
        self.received = Received()
        self.decisions: itertools.cycle[ApprovalDecision] = itertools.cycle([ApprovalDecision.APPROVED])

    async def start(self) -> None:
        async def respond(request: ApprovalRequest) -> ApprovalDecision:
            decision = next(self.decisions)
            self.received.asked.append((request, decision))
            self.received.asked_at.append(time.perf_counter())
            return decision

        self.h = await build(self.db, self.world, settings=self.settings, backend=self.backend, approvals=respond)

    def service(self) -> AskService:
        llm = LLMClient.from_settings(self.settings, backend=self.backend)
        h = self.h
        ws = h.service.workspace_id
        return AskService(settings=self.settings, db=self.db, port=h.port, llm=llm, memory=h.service.memory,
                          workspace_id=ws)  # fmt: skip

    async def run(self, case: Case) -> Received:
        await asyncio.to_thread(reset_members, self.file, case.policies)
        self.attack.route, self.attack.change, self.attack.changed = case.route, case.change, False
        self.attack.fired, self.attack.changed_at, self.attack.committed = 0, 0.0, asyncio.Event()
        self.attack.calls.clear()
        self.decisions = itertools.cycle(case.decisions)
        self.received = Received()
        posted = {cid: len(msgs) for cid, msgs in self.world.messages.items()}
        service = self.service()  # a new process's view: anything cached would be from this ask only
        context = "\n".join(THREAD) if case.route == "thread" else None
        outcome = await service.ask(AskRequest("alice", case.colleagues, QUESTION, context=context))
        self.received.crashed = outcome.failure == messages.failure_internal()
        if case.follow_up:  # its background holds the first ask's answer: only what left with consent
            self.attack.change = None
            with contextlib.suppress(AskRejectedError):  # a colleague turned memory off: rightly refused
                await service.ask(
                    AskRequest("alice", [], "And who moved the launch date?", follow_up_of=outcome.ask_id,
                               context=context)
                )  # fmt: skip
        for request in self.attack.calls:
            speaker = _speaker(request.messages[0]["content"]) or "alice"  # consensus runs on alice's side
            self.received.agents.add(speaker)
            self.received.texts.append((speaker, "\n".join(m["content"] for m in request.messages)))
        for channel_id, chat in self.world.messages.items():
            members = self.world.channels[channel_id].member_ids if channel_id in self.world.channels else ()
            for message in chat[posted.get(channel_id, 0) :]:
                for member in (m for m in members if m != self.world.bot_id):  # the bot posted it
                    self.received.texts.append((member, message.text))
        return self.received


def _speaker(system: str) -> str | None:
    head = "You are "
    return system[len(head) : system.index("'s")] if system.startswith(head) and "'s" in system else None


def violations(case: Case, received: Received) -> list[str]:
    found = ["an ask failed unexpectedly"] if received.crashed else []
    effective = {m: (p, True) for m, p in case.policies.items()}
    if case.change is not None:
        effective[case.change[0]] = (case.change[1], case.change[2])
    # The thread the requester gave is hers to use: its lines reaching her side are no leak (reaching anyone else is).
    hers = {m for m in [*PRIVATE, *RELEVANT] if case.route == "thread" and any(m in skeleton(t) for t in THREAD)}
    for receiver, text in received.texts:
        seen = skeleton(text)
        if EXCLUDED in seen:
            found.append(f"excluded channel read by {receiver}'s side")
        for marker, (holders, _) in PRIVATE.items():
            if receiver not in holders and marker in seen and not (receiver == "alice" and marker in hers):
                found.append(f"private line of {'/'.join(holders)} reached {receiver}")
        for marker, (holders, _) in RELEVANT.items():
            if receiver in holders or marker not in seen or (receiver == "alice" and marker in hers):
                continue
            # A line the thread also holds came from a holder's own agent only if that agent took part (asked, or
            # brought in by another); otherwise it came through the thread.
            asked = [h for h in holders if marker not in hers or h in case.colleagues or h in received.agents]
            if not any(_allowed(h, marker, receiver, effective, received) for h in asked):
                found.append(f"{marker!r} of {'/'.join(holders)} reached {receiver} without consent")
    return sorted(set(found))


def _allowed(
    holder: str, marker: str, receiver: str, effective: dict[str, tuple[str, bool]], received: Received
) -> bool:
    """The holder's policy let the line reach the receiver: auto, or an approval of it (or of everything, shown as
    such) whose prompt named the receiver among those who would see it."""
    policy, memory = effective.get(holder, ("auto", True))
    if not memory or policy == "never":
        return False
    if policy == "auto":
        return True
    return any(
        request.member_id == holder
        and receiver in request.context.get("audience", "").split(", ")
        and (
            decision is ApprovalDecision.APPROVED_ALL  # "everything my agent says in this ask", shown as such
            or (decision is ApprovalDecision.APPROVED and marker in skeleton(request.body))
        )
        for request, decision in received.asked
    )
