"""Consent across time: an exclusion made mid-ask applies at once, and a follow-up passes on only what its readers
were already allowed to read.

- Exclusions: a colleague excludes a channel (written to the database directly, as another process would) while its
  agent answers; what the agent read from that channel reaches no one from then on (no prompt, post or answer),
  although an obedient model pastes everything it was shown.
- Follow-ups: what a colleague on `ask` approved for the first ask's audience is not in the background of a
  follow-up that asks someone new, in any wording; the background names whose text was withheld.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from bot.agents.ablations import Ablations
from bot.agents.agent import Agent
from bot.agents.memory_tools import ClearParams, MemoryTools
from bot.agents.plan import Plan
from bot.asks import models as models_asks
from bot.asks.service import AskRequest
from bot.base.text_fold import skeleton
from bot.consent.exclusions import settle
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import PromptView, scripted_model
from bot.llm.types import LLMReply, LLMRequest
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.history import WholeHistory
from bot.platform.port import ApprovalDecision, ApprovalRequest, Channel, ChannelKind, Member, SharePolicy
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from tests.fakes.asks import build
from tests.fakes.consent import AdversarialModel, Attack


QUESTION = "When is the launch date and where is the launch venue?"
HR_LINE = "HR says the launch venue is the Zanzibar Hall, booked quietly."
MARKER = "zanzibar"


def hr_world() -> World:
    """bob reads #hr (a channel about the launch venue, among other things) and a DM with erin about the date."""
    world = World(id="excl", name="excl")
    for handle in ("alice", "bob", "erin"):
        world.add_member(Member(handle, handle, handle.title()), MemberPolicy())
    world.add_channel(Channel("C-hr", "hr", ChannelKind.PRIVATE, ("bob", "erin")))
    moment = iter(datetime(2026, 3, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=m) for m in range(20))
    world.add_message(world.dm("alice", "bob").id, "alice", "Hi Bob, are we on track?", ts=next(moment))
    world.add_message(
        world.dm("bob", "erin").id, "erin", "Heads up: the launch date moved to 14 March.", ts=next(moment)
    )
    world.add_message("C-hr", "erin", HR_LINE, ts=next(moment))
    return world


async def exclude(db: Database, member: str, channel: str) -> None:
    """The member keeps `channel` out of memory, written as the web settings page (another process) writes it."""
    async with db.session() as session:
        member_id = (await session.execute(select(models.Member.id).where(models.Member.name == member))).scalar_one()
        channel_id = (
            await session.execute(select(models.Channel.id).where(models.Channel.platform_id == channel))
        ).scalar_one()
        session.add(models.MemberExclusion(member_id=member_id, channel_id=channel_id))
        await session.commit()


class ExcludingMidAnswer(ScriptedBackend):
    """An obedient model (it pastes everything it read into its words, facts and answer); while `member`'s agent
    writes its first answer, the member excludes `channel`."""

    def __init__(self, db: Database, *, member: str, channel: str) -> None:
        self.attack = Attack(route="paste")
        super().__init__(AdversarialModel(self.attack))
        self.db, self.member, self.channel = db, member, channel
        self.changed_at: int | None = None  # index in `attack.calls` of the first request after the change

    async def complete(self, request: LLMRequest, *, response_format: dict[str, Any] | None) -> LLMReply:
        if self.changed_at is None and request.purpose == "act" and PromptView.of(request).me == self.member:
            await exclude(self.db, self.member, self.channel)
            self.changed_at = len(self.attack.calls) + 1  # this request was written before the change
        return await super().complete(request, response_format=response_format)


async def test_a_channel_excluded_while_the_agent_answers_reaches_no_one_after(
    db: Database, settings: Settings
) -> None:
    backend = ExcludingMidAnswer(db, member="bob", channel="C-hr")
    h = await build(db, hr_world(), settings=settings.replace(whole_history=True, max_turns=4), backend=backend)
    before = {channel: len(chat) for channel, chat in h.world.messages.items()}
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    calls = backend.attack.calls
    assert backend.changed_at is not None and backend.attack.fired  # bob's agent read #hr, then pasted what it read
    assert any(MARKER in skeleton(m["content"]) for m in calls[backend.changed_at - 1].messages)
    after = [m["content"] for request in calls[backend.changed_at :] for m in request.messages]
    assert after, "the ask went on after the exclusion"
    assert not [text for text in after if MARKER in skeleton(text)]
    posted = [m.text for channel, chat in h.world.messages.items() for m in chat[before.get(channel, 0) :]]
    assert not [text for text in [outcome.answer or "", *posted] if MARKER in skeleton(text)]
    async with db.session() as session:  # nor in what the ask keeps (turn records with their prompts, consensus)
        kept = [
            *(str(d) for d in (await session.execute(select(models_asks.Turn.data))).scalars()),
            *(str(d) for d in (await session.execute(select(models_asks.Consensus.data))).scalars()),
        ]
    assert not [text for text in kept if MARKER in skeleton(text)]


async def test_an_exclusion_drops_the_lines_from_notebook_cache_and_plan(db: Database, settings: Settings) -> None:
    """Read before the exclusion: a cached search, notebook lines, a plan value resting on them; all forgotten at
    the next settings read, and the same search asked again finds nothing of the channel."""
    h = await build(db, hr_world(), settings=settings)
    roster = h.service.roster
    bob = await roster.profile("bob")
    memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None, history=WholeHistory(db))
    cache: dict = {}
    tools = MemoryTools(bob.viewer, memory, Ablations(), cache=cache)
    query = ClearParams(keywords=("venue",), limit=5)
    first = await tools.run([query], [])
    assert any(MARKER in skeleton(line.text) for line in first[0].hits)
    agent = Agent(bob, llm=h.llm, tools=tools, infonav=True)
    agent.notebook.add(first[0].hits, turn=0)
    agent.notebook.release([line.id for line in first[0].hits])
    hr = next(line for line in first[0].hits if MARKER in skeleton(line.text))
    agent.plan = Plan.from_dicts([{"id": "r1", "need": "venue", "status": "known", "value": "x", "source": hr.id}])
    assert (await settle(agent, await roster.profile("bob"))).withdrawn is False  # nothing excluded yet
    agent.notebook.select(agent.plan, 6000)  # shown to the model...
    await exclude(db, "bob", "C-hr")  # ... then excluded
    profile = await settle(agent, await roster.profile("bob"))
    assert profile.withdrawn and not profile.can_take_part  # the send about to happen is held
    assert hr.id not in agent.notebook.lines and hr not in agent.notebook.shared_lines()
    assert agent.plan.known == []
    assert not any(MARKER in skeleton(line.text) for _, lines in cache.values() for line in lines)
    again = await tools.run([query], [])
    assert not again[0].cached and not any(MARKER in skeleton(line.text) for line in again[0].hits)
    assert (await settle(agent, await roster.profile("bob"))).withdrawn is False  # the next turn goes on


# ---------------------------------------------------------------------- follow-ups
DATE_LINE = "The launch date moved to 14 March."
PARAPHRASE = "For context: the new day is the fourteenth, per the earlier exchange."


def date_world(bob: SharePolicy) -> World:
    """The launch date is in bob's DM with erin; alice talks with bob and carol, who hold nothing of it."""
    world = World(id="fup", name="fup")
    for handle in ("alice", "bob", "carol", "erin"):
        world.add_member(
            Member(handle, handle, handle.title()), MemberPolicy(share=bob if handle == "bob" else SharePolicy.AUTO)
        )
    moment = iter(datetime(2026, 3, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=m) for m in range(20))
    world.add_message(world.dm("alice", "bob").id, "alice", "Hi Bob, are we on track?", ts=next(moment))
    world.add_message(world.dm("alice", "carol").id, "alice", "Hi Carol, lunch soon?", ts=next(moment))
    world.add_message(world.dm("bob", "erin").id, "erin", DATE_LINE, ts=next(moment))
    return world


def relaying(request: LLMRequest) -> str:
    """An honest agent, except that the requester's agent passes on a rewording of its background: no words of it
    in a row, none of its rare terms (what the share screen looks for)."""
    reply = json.loads(scripted_model(request))
    system = request.messages[0]["content"]
    if PromptView.of(request).me == "alice" and request.purpose == "act" and "14 march" in skeleton(system):
        reply["utterance"] = f"{reply['utterance']} {PARAPHRASE}"
    return json.dumps(reply)


async def _asked(
    db: Database, settings: Settings, bob: SharePolicy, follow_up_with: list[str], *, ablations: tuple[str, ...] = ()
) -> tuple:
    decision = [ApprovalDecision.APPROVED]  # bob approves in the first ask; asked again in the follow-up, no

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        return decision[0]

    h = await build(db, date_world(bob), settings=settings, script=relaying, approvals=approve)
    first = await h.service.ask(AskRequest("alice", ["bob"], "When is the launch date?"))
    assert "14 march" in skeleton(first.answer or "")  # bob's agent told it (approved by bob, for alice)
    h.backend.requests.clear()  # type: ignore[attr-defined]
    decision[0] = ApprovalDecision.DENIED
    follow_up = AskRequest(
        "alice", follow_up_with, "And who moved it?", follow_up_of=first.ask_id, ablations=list(ablations)
    )
    await h.service.ask(follow_up)
    return h, list(h.backend.requests)  # type: ignore[attr-defined]


def _of(requests: list[LLMRequest], handle: str) -> list[str]:
    return ["\n".join(m["content"] for m in r.messages) for r in requests if PromptView.of(r).me == handle]


async def test_a_follow_up_with_someone_new_gets_no_ask_approved_text_in_any_wording(
    db: Database, settings: Settings
) -> None:
    h, requests = await _asked(db, settings, SharePolicy.ASK, ["carol"])
    mine, carols = _of(requests, "alice"), _of(requests, "carol")
    assert mine and carols
    assert not [t for t in mine + carols if "14 march" in skeleton(t)]  # nor in consensus, nor the answer
    others = [r for r in requests if PromptView.of(r).me != "bob"]  # bob's own agent reads his memory
    assert not [r for r in others if "14 march" in skeleton("\n".join(m["content"] for m in r.messages))]
    assert not [t for t in carols if "fourteenth" in t]  # the rewording had nothing to reword
    assert all("withheld from this follow-up" in t and "Bob" in t for t in mine)  # says whose, not what


async def test_a_follow_up_within_the_approved_audience_keeps_the_earlier_answer(
    db: Database, settings: Settings
) -> None:
    """The same colleague, and nobody else to bring in: everyone it reaches was in the approved audience."""
    _, requests = await _asked(db, settings, SharePolicy.ASK, ["bob"], ablations=("no-recursion",))
    mine = _of(requests, "alice")
    assert mine and all("14 march" in skeleton(t) for t in mine)
    assert not any("withheld from this follow-up" in t for t in mine)


async def test_a_follow_up_whose_agent_may_bring_in_someone_new_withholds_it(db: Database, settings: Settings) -> None:
    """The same colleague, but alice's agent may bring in carol (alice talks with her): carol would hear it."""
    _, requests = await _asked(db, settings, SharePolicy.ASK, ["bob"])
    mine = _of(requests, "alice")
    assert mine and not [t for t in mine if "14 march" in skeleton(t)]
    assert all("withheld from this follow-up" in t for t in mine)


async def test_a_follow_up_keeps_what_an_auto_member_shared(db: Database, settings: Settings) -> None:
    _, requests = await _asked(db, settings, SharePolicy.AUTO, ["carol"])
    assert all("14 march" in skeleton(t) for t in _of(requests, "alice"))
