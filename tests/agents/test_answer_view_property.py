"""Property: the answer view never shows a viewer more than they may see.

Over random asks (question, colleagues, who holds the launch date, share policies, approval decisions, a model that
leaks through its facts or not) and every member as the viewer:
- a viewer the access rule refuses gets AskNotAllowedError, and only they do;
- every source marked visible is a message in a channel the viewer is a member of (checked against the world, not
  against the code under test), with its real channel and message id;
- an invisible source carries no message or channel id, and text only when it is exactly a line that left an
  agent with an outbox record naming the viewer in its audience (read from the stored records, not the view).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.asks.read_models.answer_view import answer_view
from bot.asks.service import AskRequest
from bot.consent.outgoing import line_text
from bot.errors import AskNotAllowedError
from bot.llm.standin.model import scripted_model
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from tests.agents.test_ask_policy_property import QUESTIONS, nothing_sensitive
from tests.fakes.asks import build, two_fact_world
from tests.fakes.records import conversations, turns


world_ids = itertools.count()
MEMBERS = ("alice", "bob", "carol", "dave", "erin")


@dataclass(frozen=True)
class Case:
    question: str
    colleagues: list[str]
    launch_with: str
    policies: dict[str, SharePolicy]
    decisions: list[ApprovalDecision]
    leaky: bool
    admin: str | None


@st.composite
def cases(draw: st.DrawFn) -> Case:
    policy = st.sampled_from([SharePolicy.AUTO, SharePolicy.ASK])
    return Case(
        question=draw(st.sampled_from(QUESTIONS)),
        colleagues=draw(st.lists(st.sampled_from(["bob", "carol"]), min_size=1, max_size=2, unique=True)),
        launch_with=draw(st.sampled_from(["bob", "carol"])),
        policies={h: draw(policy) for h in ("bob", "carol", "erin")},
        decisions=draw(st.lists(st.sampled_from(list(ApprovalDecision)), min_size=1, max_size=4)),
        leaky=draw(st.booleans()),
        admin=draw(st.sampled_from([None, "dave"])),
    )


def _located(world: World) -> dict[str, tuple[str, str]]:
    """message id -> (channel id, text), from the world itself."""
    return {m.id: (cid, m.text) for cid, msgs in world.messages.items() for m in msgs}


async def _let_out(db: Database, ask_id: int, viewer: str) -> set[str]:
    """The texts of the memory lines that left an agent with an outbox record naming `viewer` in its audience."""
    out: set[str] = set()
    for conversation in await conversations(db, ask_id):
        for turn in await turns(db, conversation.id):
            sent = (turn.data.get("sharing") or {}).get("sent") or {}
            if sent.get("verdict") == "sent" and viewer in sent.get("audience", []):
                out |= {line_text(line) for line in sent.get("sources", [])}
    return out


async def run_case(db: Database, settings: Settings, case: Case) -> None:
    decisions = itertools.cycle(case.decisions)

    async def respond(_request: ApprovalRequest) -> ApprovalDecision:
        return next(decisions)

    policies = {h: MemberPolicy(share=p) for h, p in case.policies.items()}
    world = two_fact_world(launch_with=case.launch_with, policies=policies, world_id=f"V{next(world_ids)}")
    settings = settings.replace(web_admins=case.admin or "")
    h = await build(
        db, world, settings=settings, script=nothing_sensitive if case.leaky else scripted_model, approvals=respond
    )
    outcome = await h.service.ask(AskRequest("alice", case.colleagues, case.question))
    located = _located(world)
    taking_part = {"alice", *case.colleagues} | {
        p for c in await conversations(db, outcome.ask_id) for p in c.participants
    }

    for viewer in MEMBERS:
        allowed = viewer in taking_part or viewer == case.admin
        try:
            view = await answer_view(db, outcome.ask_id, viewer=viewer, settings=settings)
        except AskNotAllowedError:
            assert not allowed, f"{case}: {viewer} was refused"
            continue
        assert allowed, f"{case}: {viewer} may not open this ask"
        for source in view.sources:
            if source.visible_to_viewer:
                channel_id, text = located[source.message_id]
                assert source.channel_id == channel_id
                assert viewer in world.channels[channel_id].member_ids, f"{case}: {viewer} cannot see {source}"
                continue
            assert (source.message_id, source.channel_id) == (None, None), f"{case}: ids of a hidden source"
            if source.text is not None:  # a line an agent's outbox let out to this viewer, and no other
                let_out = await _let_out(db, outcome.ask_id, viewer)
                assert source.text in let_out, f"{case}: {source.text!r} to {viewer}"


async def test_the_answer_view_shows_no_viewer_more_than_they_may_see(sqlite_db: Database, settings: Settings) -> None:
    loop = asyncio.get_running_loop()

    def on_loop(coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    @settings_for_views
    @given(cases())
    def check(case: Case) -> None:
        on_loop(run_case(sqlite_db, settings, case))

    await asyncio.to_thread(check)


settings_for_views = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
