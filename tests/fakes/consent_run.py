"""Running consent cases over the consent workspace (`tests.fakes.consent`) and judging what reached whom.

    workspace = Workspace(db, settings, file, elsewhere=False); await workspace.start()
    received = await workspace.run(case)       # every sink, read as each person who can see it
    violations(case, received)                 # ["private line of bob/dave reached carol via page /asks/3", ...]

The sinks, each read as the people who see it: the model prompts of each member's agent; every chat post (as each
member of its channel; the hidden agents thread as its readers, `HIDDEN`); notes shown to one member; the approval
prompts (as the member asked); the INFO log (as the operator, `ADMIN`); the web pages and their JSON rendered as
each member and the admin (`consent_sinks.PageReader`, also read while an approval waits); the rows the asks left
(`consent_sinks.stored_rows`, which says who may read each).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from bot.asks.service import AskRequest, AskService
from bot.errors import AskRejectedError
from bot.platform.port import ApprovalDecision, ApprovalRequest
from bot.settings import Settings
from bot.store.db import Database
from bot.texts import failure_texts
from tests.fakes.asks import build
from tests.fakes.consent import AdversarialBackend, Attack, AttackedClient
from tests.fakes.consent_sinks import LogSink, PageReader, Seen, stored_rows
from tests.fakes.consent_text import carries, skeleton
from tests.fakes.consent_world import (
    ADMIN,
    COLLEAGUES,
    EXCLUDED,
    GENERAL,
    MEMBERS,
    OPS,
    PRIVATE,
    QUESTION,
    RELEVANT,
    THREAD,
    consent_world,
    reset_members,
)


HIDDEN = "#askwith-agents"
CHANNEL_NAMES = {GENERAL: "general"}  # whoever reads the hidden agents thread: no member's memory is theirs
FOLLOW_UP = "And who moved the launch date?"


@dataclass(frozen=True)
class Case:
    colleagues: list[str]
    route: str
    policies: dict[str, str]  # member -> share policy when the ask starts (memory on)
    change: tuple[str, str, bool] | None  # (member, policy, memory on), made by another process mid-ask
    decisions: list[ApprovalDecision]
    follow_up: bool
    fault: tuple[str, int] | None = None  # (kind, n): the n-th distinct model request of the ask fails so
    channel: bool = False  # asked in #general (the answer is posted there) instead of in a DM
    fail_with: str = "unavailable"  # how the "failed" route's act call fails (`consent_faults.FAULT_KINDS`)

    @property
    def new_colleague(self) -> str:
        """Whom the "follow" route's follow-up goes to: a colleague not asked the first time."""
        return next(c for c in COLLEAGUES if c not in self.colleagues)


@dataclass
class Received:
    """What reached whom: (receiver, sink, text); the receiver is a member, `HIDDEN` or the admin (`ADMIN`)."""

    texts: list[Seen] = field(default_factory=list)
    asked: list[tuple[ApprovalRequest, ApprovalDecision]] = field(default_factory=list)
    asked_at: list[float] = field(default_factory=list)  # time.perf_counter() of each prompt
    crashed: bool = False  # an ask failed unexpectedly (a crash proves nothing about consent)
    agents: set[str] = field(default_factory=set)  # members whose agents took part (asked or brought in)
    excluded: bool = False  # #ops was excluded mid-ask ("exclude" route)
    ask_ids: list[int] = field(default_factory=list)
    read_waiting: set[int] = field(default_factory=set)  # asks whose pages were read while an approval waited


class Workspace:
    """One world, mirrored once; every case runs a fresh service over it (its settings reset first)."""

    def __init__(self, db: Database, settings: Settings, database_file: Path, *, elsewhere: bool) -> None:
        # Failures stay quick: one retry, no backoff, a short per-attempt time-out. The stand-in answers without
        # awaiting anything, so no time-out can cut a reply short however busy the machine; only the "timeout"
        # fault's silence runs it out, and every attempt of it is waited out (0.3 s made that a tenth of the run).
        self.settings = settings.replace(llm_max_retries=1, llm_backoff_seconds=0.0, llm_timeout_seconds=0.05)
        self.db, self.file = db, str(database_file)
        self.attack = Attack(database=self.file)
        self.backend = AdversarialBackend(self.attack, elsewhere=elsewhere)
        self.world = consent_world()
        self.received = Received()
        self.decisions: itertools.cycle[ApprovalDecision] = itertools.cycle([ApprovalDecision.APPROVED])
        self.pages: PageReader | None = None

    async def start(self) -> None:
        async def respond(request: ApprovalRequest) -> ApprovalDecision:
            decision = next(self.decisions)
            self.received.asked.append((request, decision))
            self.received.asked_at.append(time.perf_counter())
            await self._while_waiting()
            return decision

        self.h = await build(self.db, self.world, settings=self.settings, backend=self.backend, approvals=respond)
        h = self.h
        self.pages = PageReader(self.settings, self.db, h.port, h.service.workspace_id, h.service, admin=ADMIN)

    async def _while_waiting(self) -> None:
        """What the requester's page and its progress JSON show while a colleague's approval waits."""
        assert self.pages is not None
        ask_id = await self.pages.latest_ask()
        if ask_id is not None and ask_id not in self.received.read_waiting:  # once an ask: the same page after
            self.received.read_waiting.add(ask_id)
            self.received.texts += await self.pages.read_live(ask_id, "alice")

    def service(self, settings: Settings) -> AskService:
        llm = AttackedClient.from_settings(settings, backend=self.backend)
        h = self.h
        ws = h.service.workspace_id
        return AskService(settings=settings, db=self.db, port=h.port, llm=llm, memory=h.service.memory,
                          workspace_id=ws)  # fmt: skip

    async def run(self, case: Case) -> Received:
        await asyncio.to_thread(reset_members, self.file, case.policies)
        self.attack.reset(case.route, case.change, case.fault, case.fail_with)
        self.decisions = itertools.cycle(case.decisions)
        self.received = received = Received()
        posted = {cid: len(msgs) for cid, msgs in self.world.messages.items()}
        notes = len(self.h.port.ephemerals)
        # Searches leave records only when the agents search: the "search" route reads memory by searching.
        settings = self.settings.replace(whole_history=False) if case.route == "search" else self.settings
        service = self.service(settings)  # a new process's view: anything cached would be from this ask only
        assert self.pages is not None
        self.pages.set_service(service)
        context = "\n".join(THREAD) if case.route == "thread" else None
        origin = GENERAL if case.channel else None
        logs = LogSink()
        async with logs.capturing():
            outcome = await service.ask(
                AskRequest("alice", case.colleagues, QUESTION, origin_channel_id=origin, context=context)
            )
            received.ask_ids.append(outcome.ask_id)
            received.crashed = outcome.failure == failure_texts.failure_internal()
            if case.follow_up or case.route == "follow":  # its background holds the first answer
                self.attack.change = None
                others = [case.new_colleague] if case.route == "follow" else []
                with contextlib.suppress(AskRejectedError):  # a colleague turned memory off: rightly refused
                    follow = await service.ask(
                        AskRequest("alice", others, FOLLOW_UP, origin_channel_id=origin,
                                   follow_up_of=outcome.ask_id, context=context)
                    )  # fmt: skip
                    received.ask_ids.append(follow.ask_id)
        received.excluded = self.attack.excluded
        self._prompts_and_posts(posted, notes)
        received.texts += [(ADMIN, "log (INFO+)", line) for line in logs.lines]
        for request, _ in received.asked:
            shown = "\n".join([request.title, request.body, *request.context.values()])
            received.texts.append((request.member_id, "approval prompt", shown))
        # Everyone in the asks (asked or brought in) and the admin; the others' pages hold nothing of an ask they are
        # not in (403), and the channel's readers read its posts above.
        viewers = [m for m in MEMBERS if m in received.agents or m in case.colleagues] + [ADMIN]
        received.texts += await self.pages.read(received.ask_ids, viewers, requester="alice")
        received.texts += await stored_rows(self.db, received.ask_ids, requester="alice")
        return received

    async def close(self) -> None:
        await self.backend.close()
        if self.pages is not None:
            await self.pages.close()

    def _prompts_and_posts(self, posted: dict[str, int], notes: int) -> None:
        received = self.received
        for request in self.attack.calls:
            speaker = _speaker(request.messages[0]["content"]) or "alice"  # consensus runs on alice's side
            received.agents.add(speaker)
            received.texts.append((speaker, f"model prompt ({request.purpose})", _prompt(request)))
        for channel_id, chat in self.world.messages.items():
            members = self.world.channels[channel_id].member_ids if channel_id in self.world.channels else ()
            readers = [m for m in members if m != self.world.bot_id] or [HIDDEN]  # only the bot: the hidden thread
            for message in chat[posted.get(channel_id, 0) :]:
                received.texts += [(reader, f"post in {channel_id}", message.text) for reader in readers]
        for note in self.h.port.ephemerals[notes:]:
            received.texts.append((note.member_id, "note", note.text))


def _prompt(request: object) -> str:
    return "\n".join(m["content"] for m in request.messages)  # type: ignore[attr-defined]


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
    skeletons: dict[str, str] = {}  # a post or row read by several people is folded once
    for receiver, sink, text in received.texts:
        seen = skeletons.get(text) or skeletons.setdefault(text, skeleton(text))
        via = f" via {sink}"
        if carries(seen, EXCLUDED):
            found.append(f"excluded channel read by {receiver}'s side{via}")
        for marker, (holders, _) in PRIVATE.items():
            if receiver not in holders and carries(seen, marker) and not (receiver == "alice" and marker in hers):
                found.append(f"private line of {'/'.join(holders)} reached {receiver}{via}")
        for marker, (holders, _) in RELEVANT.items():
            if receiver in holders or not carries(seen, marker) or (receiver == "alice" and marker in hers):
                continue
            if marker == OPS[0] and received.excluded:
                found.append(f"line of #ops, excluded mid-ask by {'/'.join(holders)}, reached {receiver}{via}")
                continue
            # A line the thread also holds came from a holder's own agent only if that agent took part (asked, or
            # brought in by another); otherwise it came through the thread.
            asked = [h for h in holders if marker not in hers or h in case.colleagues or h in received.agents]
            # A line of the requester's own DMs leaves only as its other holder (its author) allows: hers is no say.
            asked = [h for h in asked if h != "alice"]
            if not any(_allowed(h, marker, receiver, effective, received) for h in asked):
                found.append(f"{marker!r} of {'/'.join(holders)} reached {receiver} without consent{via}")
    return sorted(set(found))


def _named(receiver: str, audience: str) -> bool:
    """Whether an approval's audience ("erin, alice, #general") names the receiver: by handle, or a channel they
    read (#general: every member; the hidden agents thread however the prompt calls it)."""
    named = [a.strip() for a in audience.split(",") if a.strip()]
    if receiver == HIDDEN:
        return any(re.search(r"askwith-agents|agents'? thread|hidden", a, re.I) for a in named)
    return receiver in named or (f"#{CHANNEL_NAMES[GENERAL]}" in named and receiver in MEMBERS)


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
        and _named(receiver, request.context.get("audience", ""))
        and (
            decision is ApprovalDecision.APPROVED_ALL  # "everything my agent says in this ask", shown as such
            or (decision is ApprovalDecision.APPROVED and carries(skeleton(request.body), marker))
        )
        for request, decision in received.asked
    )
