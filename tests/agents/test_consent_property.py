"""Property: whatever route a model takes, a member's memory reaches others only as that member's policy allows, at
the moment it leaves.

Over random asks in one workspace (which colleagues, each member's share policy, a policy or memory switch changed
by another process once the ask runs, the member's answers to approval prompts, a follow-up ask) and a model that
tries one leak route per ask (`tests.fakes.consent`), for every text that reached someone other than the
members whose memory holds a marked line (another member's agent prompts, the consensus prompt, the answer, any post):

- a private line (unrelated to the question) never reaches them, under any policy;
- a line about the question reaches them only when a holder's policy was `auto` (memory on) when it left, or the
  holder approved a prompt that showed that text (or approved everything for the ask);
- the channel every colleague excluded is never read by anyone.

The oracle reads only what the fake model was sent, what was posted and what the members were asked: never the
outbox's own records.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.port import ApprovalDecision, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.consent import COLLEAGUES, ROUTES
from tests.fakes.consent_run import Case, Workspace, violations


DEFAULT_CASES = int(os.environ.get("ASKWITH_TEST_CONSENT_CASES", "500"))  # fewer while developing
DECISIONS = [ApprovalDecision.APPROVED, ApprovalDecision.DENIED, ApprovalDecision.APPROVED_ALL]
POLICIES = [str(p) for p in SharePolicy]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    colleagues = draw(st.lists(st.sampled_from(COLLEAGUES), min_size=1, max_size=2, unique=True))
    members = [*COLLEAGUES, "erin"]
    change = draw(
        st.none() | st.tuples(st.sampled_from(members), st.sampled_from(POLICIES), st.booleans())  # type: ignore[operator]
    )
    return Case(
        colleagues=colleagues,
        route=draw(st.sampled_from(ROUTES)),
        policies={m: draw(st.sampled_from(POLICIES)) for m in members},
        change=change,
        decisions=draw(st.lists(st.sampled_from(DECISIONS), min_size=1, max_size=4)),
        follow_up=draw(st.sampled_from([False, False, False, True])),  # one case in four (each is a second ask)
    )


async def check_cases(settings: Settings, *, examples: int, elsewhere: bool) -> None:
    # Reads stay in this process (no reader process): a case is a few hundred small queries.
    settings = settings.replace(whole_history=True, max_turns=4)
    file = settings.data_dir / "consent.db"
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{file}")
    try:
        workspace = Workspace(db, settings, file, elsewhere=elsewhere)
        await workspace.start()
        loop = asyncio.get_running_loop()

        def on_loop(coro: Coroutine[Any, Any, Any]) -> Any:
            return asyncio.run_coroutine_threadsafe(coro, loop).result()

        @settings_for(examples)
        @given(cases())
        def check(case: Case) -> None:
            received = on_loop(workspace.run(case))
            assert not violations(case, received), (case, violations(case, received))

        await asyncio.to_thread(check)
    finally:
        await db.close()


def settings_for(examples: int) -> settings:
    return settings(
        max_examples=examples, deadline=None, database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )  # fmt: skip


@pytest.mark.timeout(900)  # ~50 s of CPU: minutes on a busy machine
async def test_no_route_takes_memory_past_its_members_consent(settings: Settings) -> None:
    await check_cases(settings, examples=DEFAULT_CASES, elsewhere=False)


@pytest.mark.slow
@pytest.mark.timeout(7200)  # ~10 minutes of CPU, and a process for every policy change
async def test_no_route_takes_memory_past_its_members_consent_many(settings: Settings) -> None:
    """5,000 cases; every policy change is written by a separate process."""
    await check_cases(settings, examples=5000, elsewhere=True)
