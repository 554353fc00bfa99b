"""Multi-party asks: `--with bob --with carol` runs both 1:1 conversations at once, then one consensus."""

from __future__ import annotations

from datetime import datetime, timedelta

from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.records import conversations, turns


LATENCY_S = 0.2


def _interval(turn) -> tuple[datetime, datetime]:  # noqa: ANN001
    start = datetime.fromisoformat(turn.data["started_at"])
    return start, start + timedelta(seconds=turn.data["latency_s"])


def _overlap(a, b) -> float:  # noqa: ANN001
    (a_start, a_end), (b_start, b_end) = _interval(a), _interval(b)
    return max(0.0, (min(a_end, b_end) - max(a_start, b_start)).total_seconds())


async def test_two_colleagues_converse_concurrently_then_one_consensus(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings, latency_s=LATENCY_S)

    outcome = await h.service.ask(AskRequest("alice", ["bob", "carol"], QUESTION, ablations=["no-recursion"]))

    assert outcome.status == "done" and "Bluebird" in outcome.answer and "14 March" in outcome.answer
    # the two talks run concurrently: their rows are stored in whichever order they opened
    convs = sorted(await conversations(db, outcome.ask_id), key=lambda c: c.participants)
    assert [c.participants for c in convs] == [["alice", "bob"], ["alice", "carol"]]
    with_bob, with_carol = [await turns(db, c.id) for c in convs]
    # Concurrent, not merely interleaved: a turn of one conversation runs while a turn of the other runs.
    overlaps = [_overlap(a, b) for a in with_bob for b in with_carol]
    assert max(overlaps) >= 2 * LATENCY_S * 0.9, overlaps
    # The talks take less than their turns one after another. Read from the turns' own clocks, so planning,
    # consensus and a loaded machine's pauses outside the talks do not count.
    every_turn = [_interval(t) for t in [*with_bob, *with_carol]]
    span = (max(end for _, end in every_turn) - min(start for start, _ in every_turn)).total_seconds()
    serial = sum(t.data["latency_s"] for t in [*with_bob, *with_carol])
    assert span < serial, (span, serial)

    consensus = outcome.result.consensus
    assert [label for label, _ in consensus.statements] == ["alice/bob", "bob", "alice/carol", "carol"]
    assert any(k.startswith("carol.") for k in consensus.cited)
    assert any(k.startswith("alice/") for k in consensus.cited)
    assert h.llm.totals.by_purpose.get("consensus") == 1
