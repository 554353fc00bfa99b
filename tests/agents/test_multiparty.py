"""Multi-party asks: `--with bob --with carol` runs both 1:1 conversations at once, then one consensus."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.records import conversations, turns


LATENCY_S = 0.2


def _span(rows) -> tuple[datetime, datetime]:  # noqa: ANN001
    starts = [datetime.fromisoformat(t.data["started_at"]) for t in rows]
    ends = [start + timedelta(seconds=t.data["latency_s"]) for start, t in zip(starts, rows, strict=True)]
    return min(starts), max(ends)


async def test_two_colleagues_converse_concurrently_then_one_consensus(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings, latency_s=LATENCY_S)

    started = time.perf_counter()
    outcome = await h.service.ask(AskRequest("alice", ["bob", "carol"], QUESTION, ablations=["no-recursion"]))
    wall = time.perf_counter() - started

    assert outcome.status == "done" and "Bluebird" in outcome.answer and "14 March" in outcome.answer
    convs = await conversations(db, outcome.ask_id)
    assert [c.participants for c in convs] == [["alice", "bob"], ["alice", "carol"]]
    with_bob, with_carol = [await turns(db, c.id) for c in convs]
    (bob_start, bob_end), (carol_start, carol_end) = _span(with_bob), _span(with_carol)
    assert max(bob_start, carol_start) < min(bob_end, carol_end), "the two conversations did not overlap"
    serial = sum(t.data["latency_s"] for t in [*with_bob, *with_carol])  # the turns one after another
    shortest, longest = sorted(sum(t.data["latency_s"] for t in rows) for rows in (with_bob, with_carol))
    assert wall < longest + shortest / 2 < serial, (wall, longest, serial)

    consensus = outcome.result.consensus
    assert [label for label, _ in consensus.statements] == ["alice/bob", "bob", "alice/carol", "carol"]
    assert any(k.startswith("carol.") for k in consensus.cited)
    assert any(k.startswith("alice/") for k in consensus.cited)
    assert h.llm.totals.by_purpose.get("consensus") == 1
