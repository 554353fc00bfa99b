"""Property: the answer view never shows a viewer more than they may see.

Over random asks (question, colleagues, who holds the launch date, share policies, approval decisions, a model that
leaks through its facts or not) and every member as the viewer:
- a viewer the access rule refuses gets AskNotAllowedError, and only they do;
- every source marked visible is a message in a channel the viewer is a member of (checked against the world, not
  against the code under test), with its real channel and message id;
- an invisible source carries no message or channel id, and text only when it is exactly a line that the
  colleague's agent released in a turn that was not withheld (what its share screen let through).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.agents.scripted_model import scripted_model
from bot.asks.answer_view import answer_view
from bot.asks.service import AskRequest
from bot.errors import AskNotAllowedError
from bot.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.world import MemberPolicy, World
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


async def _released(db: Database, ask_id: int, requester: str) -> dict[str, set[str]]:
    """holder -> texts of the lines its agent released in turns that were not withheld."""
    out: dict[str, set[str]] = {}
    for conversation in await conversations(db, ask_id):
        found: dict[str, str] = {}
        for turn in await turns(db, conversation.id):
            for line in turn.data.get("evidence", []):
                found.setdefault(line["id"], line["text"])
            if turn.agent == requester or turn.data.get("approval") in ("denied", "timeout", "unreachable"):
                continue
            for line_id in turn.data.get("released", []):
                if line_id in found:
                    out.setdefault(turn.agent, set()).add(found[line_id])
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
    released = await _released(db, outcome.ask_id, "alice")
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
            if source.text is not None:
                assert source.via != "alice", f"{case}: the requester's agent released nothing to {viewer}"
                assert source.text in released.get(source.via, set()), f"{case}: {source.text!r} was not released"


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
