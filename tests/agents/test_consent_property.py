"""Property: whatever route a model takes, a member's memory reaches others only as that member's policy allows, at
the moment it leaves, in every sink anyone can read.

Over random asks in one workspace (which colleagues, each member's share policy, a policy or memory switch changed
by another process once the ask runs, the member's answers to approval prompts, a follow-up ask, an ask made in
#general, a model failure at a random call) and a model that tries one leak route per ask (`tests.fakes.consent`),
every sink is read as each person who can see it (`tests.fakes.consent_run`): each agent's model prompts, every
chat post (channel readers; the hidden agents thread's readers), notes, approval prompts, the INFO log (the
operator), the web pages and their JSON rendered as each member in the asks and as an admin without the raw-prompt
setting (also while an approval waits), and the rows the asks left (`tests.fakes.consent_sinks` says who may read
each). For every text that reached someone other than the members whose memory holds a marked line:

- a private line (unrelated to the question) never reaches them, under any policy (a DM to the requester, from a
  member on any policy, included);
- a line about the question reaches them only when a holder's policy was `auto` (memory on) when it left, or the
  holder approved a prompt that showed that text (or approved everything for the ask) to an audience naming them;
  a line of the requester's own DMs counts as its author's (Erin's "just between us": the requester has no say);
- the channel every colleague excluded is never read by anyone; a channel its members exclude mid-ask, once their
  agents have read it, reaches no one else from then on.

Thread context (the `thread` route): the ask carries the thread an "ask about this thread" shortcut was used on, and a
follow-up carries the first answer; both quote colleagues' memory lines. What the requester was shown is hers to use:
those lines reaching her own side (her agent's prompts, the consensus, her answer) are no leak. Derived from M's memory
still means any text carrying M's line, wherever the requester got it; so it must not reach a third member (another
colleague's agent, a recruited one, a channel post) except as M's own agent passed it: a private line never, a line
about the question only when a holder asked in this ask had it leave under `auto` or approved it. The requester's
agent may read the context but not pass it on (`bot.consent.screen`: it is screened like memory no fact may cite).

The oracle reads only what the sinks show (prompts, posts, approval prompts, logs, pages, rows): never the outbox's own
records.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections import Counter
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from bot.platform.port import ApprovalDecision, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.consent import ROUTES
from tests.fakes.consent_faults import FAULT_KINDS
from tests.fakes.consent_run import Case, Workspace, violations
from tests.fakes.consent_world import COLLEAGUES


DEFAULT_CASES = int(os.environ.get("ASKWITH_TEST_CONSENT_CASES", "500"))  # fewer while developing
MANY_CASES = int(os.environ.get("ASKWITH_TEST_CONSENT_MANY_CASES", "5000"))  # the slow run's
# Some routes only, while developing: ASKWITH_TEST_CONSENT_ROUTES=relay,dm
ROUTES_RUN = tuple(r for r in os.environ.get("ASKWITH_TEST_CONSENT_ROUTES", "").split(",") if r in ROUTES) or ROUTES
# Each shard draws its cases from a fixed seed (Hypothesis' own advice for CI); ASKWITH_TEST_CONSENT_SEED=N explores
# other cases while developing.
SEED = int(os.environ.get("ASKWITH_TEST_CONSENT_SEED", "43"))
SHARDS = 4  # the default run's cases in four tests, so the suite's workers share them
MANY_SHARDS = 10  # the slow run's in ten: short tests that work stealing spreads beside the long oracles
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
        route=ROUTES[0],  # set by `check_cases`, in turn
        policies=draw(_policies(members)),
        change=change,
        decisions=draw(st.lists(st.sampled_from(DECISIONS), min_size=1, max_size=4)),
        follow_up=draw(st.sampled_from([False, False, False, True])),  # one case in four (each is a second ask)
        # One case in three meets a failure at a random request of the ask (its retries and repair fail alike).
        fault=draw(st.sampled_from([None, None, *FAULT_KINDS]).flatmap(_at)),
        channel=draw(st.sampled_from([False, False, True])),  # one in three asked in #general
        fail_with=draw(st.sampled_from(FAULT_KINDS)),
    )


def _policies(members: list[str]) -> st.SearchStrategy[dict[str, str]]:
    """Each member's policy; one case in three gives everyone the same one (drawn independently, five members all
    on `ask` would come once in 243 cases, and that is where a relay's words of two owners meet)."""
    same = st.sampled_from(POLICIES).map(lambda policy: dict.fromkeys(members, policy))
    mixed = st.fixed_dictionaries({m: st.sampled_from(POLICIES) for m in members})
    return st.one_of(mixed, mixed, same)


def _at(kind: str | None) -> st.SearchStrategy[tuple[str, int] | None]:
    return st.just(None) if kind is None else st.tuples(st.just(kind), st.integers(0, 14))


async def check_cases(settings: Settings, *, examples: int, elsewhere: bool, shard: int = 0) -> None:
    """Runs every case (no stopping at the first leak, so one run shows every route that leaks), then fails with what
    leaked: cases per route, violations per sink, and the first cases in full. Routes take turns (Hypothesis favours
    the first of a list): every route gets its share of the cases, whatever else each case draws."""
    settings = settings.replace(whole_history=True, max_turns=4)
    file = settings.data_dir / "consent.db"
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{file}")
    ran: Counter[str] = Counter()
    leaks: list[tuple[Case, list[str]]] = []
    try:
        workspace = Workspace(db, settings, file, elsewhere=elsewhere)
        await workspace.start()
        loop = asyncio.get_running_loop()

        def on_loop(coro: Coroutine[Any, Any, Any]) -> Any:
            return asyncio.run_coroutine_threadsafe(coro, loop).result()

        @seed(SEED + shard + (1000 if elsewhere else 0))  # the same cases in every run: CI judges what was seen
        @settings_for(examples)
        @given(cases())
        def check(case: Case) -> None:
            case = replace(case, route=ROUTES_RUN[(shard + sum(ran.values())) % len(ROUTES_RUN)])
            found = violations(case, on_loop(workspace.run(case)))
            ran[case.route] += 1
            if found:
                leaks.append((case, found))

        await asyncio.to_thread(check)
        await workspace.close()
    finally:
        await db.close()
    assert not leaks, leak_report(ran, leaks)


def leak_report(ran: Counter[str], leaks: list[tuple[Case, list[str]]]) -> str:
    by_route = Counter(case.route for case, _ in leaks)
    by_sink = Counter(_sink(v) for _, found in leaks for v in found)
    sinks_of = {r: Counter(_sink(v) for case, found in leaks if case.route == r for v in found) for r in ROUTES}
    top = {r: ", ".join(s for s, _ in sinks.most_common(3)) for r, sinks in sinks_of.items()}
    lines = [f"{len(leaks)} of {sum(ran.values())} cases leaked.", "route: cases leaked / run (top sinks)"]
    lines += [f"  {r}: {by_route[r]} / {ran[r]} ({top[r]})" for r in ROUTES if ran[r]]
    lines += ["sink: violations"] + [f"  {sink}: {n}" for sink, n in by_sink.most_common()]
    lines += ["first cases:"] + [f"  {case}: {found[:6]}" for case, found in leaks[:3]]
    return "\n".join(lines)


def _sink(violation: str) -> str:
    """Where a violation was read, without ids ("page /asks/N")."""
    return re.sub(r"\d+", "N", violation.split(" via ")[-1])


def settings_for(examples: int) -> settings:
    return settings(
        max_examples=examples, deadline=None, database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )  # fmt: skip


@pytest.mark.timeout(1800)  # ~40 s of CPU per shard: many minutes on a busy machine
@pytest.mark.parametrize("shard", range(SHARDS))
async def test_no_route_takes_memory_past_its_members_consent(settings: Settings, shard: int) -> None:
    """The default run, in shards that pytest-xdist spreads over its workers (each its own workspace and store)."""
    await check_cases(settings, examples=-(-DEFAULT_CASES // SHARDS), elsewhere=False, shard=shard)


async def test_a_relayed_question_makes_no_unrelated_line_about_the_ask(settings: Settings) -> None:
    """Found by the slow run (shard 2): a relay brings in Erin, whose agent plans from the relayed text ("Found: where
    is the launch venue: … booked today"); a line sharing only the relay's filler ("found") with it, Dave's private
    "Halvorsen audit found gaps" DM to her, passed as about the question and reached the requester. Once the
    workspace holds an earlier ask the relay carries that text; in a sub-conversation only the ask's words count."""
    settings = settings.replace(whole_history=True, max_turns=4)
    file = settings.data_dir / "consent.db"
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{file}")
    try:
        workspace = Workspace(db, settings, file, elsewhere=False)
        await workspace.start()
        case = Case(
            colleagues=["bob", "carol"], route="relay",
            policies={"dave": "never", "carol": "auto", "bob": "auto", "erin": "ask"}, change=None,
            decisions=[ApprovalDecision.APPROVED, ApprovalDecision.DENIED], follow_up=False,
        )  # fmt: skip
        for _ in range(3):
            assert violations(case, await workspace.run(case)) == []
        await workspace.close()
    finally:
        await db.close()


@pytest.mark.slow
@pytest.mark.timeout(2400)  # 500 cases a shard: minutes of CPU, and a process for every policy change
@pytest.mark.parametrize("shard", range(MANY_SHARDS))
async def test_no_route_takes_memory_past_its_members_consent_many(settings: Settings, shard: int) -> None:
    """5,000 cases (in ten shards); every policy change is written by a separate process."""
    await check_cases(settings, examples=-(-MANY_CASES // MANY_SHARDS), elsewhere=True, shard=shard)
