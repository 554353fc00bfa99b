"""Durable asks: a worker that dies mid-ask is replaced; the ask resumes from its last saved turn; the requester
gets exactly one final post."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import event, func, update

from bot.asks import models
from bot.asks.delivery import Delivery
from bot.asks.record import AskRecorder
from bot.asks.service import AskRequest, AskService
from bot.asks.worker import AskWorker
from bot.errors import ClaimLostError
from bot.platform.port import ThreadRef
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION, Harness, build, two_fact_world
from tests.fakes.records import conversations, llm_calls, turns


def _finals(h: Harness, ask_id: int) -> list[str]:
    dm = h.world.dm(h.world.bot_id, "alice").id
    return [m.text for m in h.world.messages.get(dm, []) if f"transcripts show {ask_id}" in m.text]


def _second_worker(h: Harness, settings: Settings) -> AskService:
    s = h.service
    return AskService(
        settings=settings, db=s.db, port=s.port, llm=s.llm, memory=s.memory, workspace_id=s.workspace_id,
        worker_id="worker-b",
    )  # fmt: skip


async def _saved_turns(db: Database, ask_id: int) -> int:
    total = 0
    for conversation in await conversations(db, ask_id):
        total += len(await turns(db, conversation.id))
    return total


async def test_a_dead_workers_ask_is_resumed_by_the_next_worker(db: Database, settings: Settings) -> None:
    settings = settings.replace(worker_stale_seconds=0.4, worker_heartbeat_seconds=0.1)
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings, latency_s=0.05)
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    assert await h.service.claim_next() == ask_id

    first = asyncio.create_task(h.service.process(ask_id))  # worker A
    while await _saved_turns(db, ask_id) < 3:
        await asyncio.sleep(0.02)
    first.cancel()  # worker A dies: no more turns, no more heartbeats
    await asyncio.gather(first, return_exceptions=True)
    calls_before = len(await llm_calls(db, ask_id))

    second = _second_worker(h, settings)
    assert await second.claim_next() is None  # A's claim is still fresh
    await asyncio.sleep(0.5)
    assert await second.claim_next() == ask_id
    outcome = await second.process(ask_id)

    assert outcome.status == "done" and "14 March" in outcome.answer and "Bluebird" in outcome.answer
    assert len(_finals(h, ask_id)) == 1
    ask = await h.service.load(ask_id)
    assert (ask.attempts, ask.claimed_by, ask.final_post) == (2, "worker-b", "posted")
    top = (await conversations(db, ask_id))[0]
    indices = [t.idx for t in await turns(db, top.id)]
    assert indices == list(range(len(indices)))  # resumed where A stopped: no turn twice, none missing
    assert calls_before >= 6 and len(await llm_calls(db, ask_id)) > calls_before
    # Worker A, were it only paused, could not write into the ask any more.
    stale = AskRecorder(
        db, h.port, h.service.roster, ask_id=ask_id, worker_id=h.service.worker_id, thread=ThreadRef("", "")
    )
    with pytest.raises(ClaimLostError):
        await stale.heartbeat()


async def test_a_final_post_interrupted_mid_way_is_not_sent_twice(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings.replace(worker_stale_seconds=0.0))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert len(_finals(h, outcome.ask_id)) == 1
    # Pretend the worker died after posting but before recording it: state "posting", ask stale.
    async with db.session() as session, session.begin():
        await session.execute(
            update(models.Ask).where(models.Ask.id == outcome.ask_id).values(final_post="posting", status="running")
        )
    assert await h.service.claim_next() == outcome.ask_id
    await h.service.process(outcome.ask_id)
    assert len(_finals(h, outcome.ask_id)) == 1
    assert (await h.service.load(outcome.ask_id)).final_post == "posted"


async def test_a_final_post_that_never_went_out_is_sent_once(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings.replace(worker_stale_seconds=0.0))
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    dm = h.world.dm(h.world.bot_id, "alice").id
    h.world.messages[dm] = [m for m in h.world.messages[dm] if f"show {outcome.ask_id}" not in m.text]  # lost
    async with db.session() as session, session.begin():
        await session.execute(
            update(models.Ask).where(models.Ask.id == outcome.ask_id).values(final_post="posting", status="running")
        )
    assert await h.service.claim_next() == outcome.ask_id
    await h.service.process(outcome.ask_id)
    assert len(_finals(h, outcome.ask_id)) == 1


async def test_worker_runs_queued_asks_and_survives_a_bug(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    good = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    worker = AskWorker(h.service)
    assert (await worker.run_once()).ask_id == good
    assert await worker.run_once() is None

    bad = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    h.service.memory = None  # a bug: the service is broken for this ask
    assert await worker.run_once() is None
    ask = await h.service.load(bad)
    assert ask.status == "failed" and ask.final_post == "posted" and len(_finals(h, bad)) == 1


async def test_a_lost_database_connection_resumes_the_ask_instead_of_failing_it(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole restart, through a real PostgreSQL server: tests/reliability/test_postgres_restart.py.
    h = await build(db, two_fact_world(), settings=settings.replace(worker_heartbeat_seconds=0.02), latency_s=0.02)
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    process, heartbeat, runs, beats = h.service.process, AskRecorder.heartbeat, [], []

    async def cut_once(ask_id: int) -> object:
        runs.append(ask_id)
        if len(runs) == 1:  # the first run dies on the cut connection
            raise ConnectionResetError(104, "Connection reset by peer")
        return await process(ask_id)

    async def beat(recorder: AskRecorder) -> bool:
        beats.append(recorder.ask_id)
        if len(beats) == 1:
            raise ConnectionRefusedError(111, "Connect call failed")
        return await heartbeat(recorder)

    monkeypatch.setattr(h.service, "process", cut_once)
    monkeypatch.setattr(AskRecorder, "heartbeat", beat)
    outcome = await AskWorker(h.service).run_once()
    assert outcome is not None and outcome.status == "done" and "14 March" in (outcome.answer or "")
    assert len(runs) == 2 and len(beats) > 1  # resumed once; the beat after the failed one still ran
    ask = await h.service.load(ask_id)
    assert (ask.attempts, ask.final_post) == (1, "posted") and len(_finals(h, ask_id)) == 1


async def test_an_ask_run_in_this_process_is_stored_claimed_so_no_worker_takes_it_first(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(), settings=settings, latency_s=0.05)
    other = _second_worker(h, settings)
    taken: list[int | None] = []
    submit = h.service.submit

    async def submit_then_poll(request: AskRequest, **options: bool) -> int:
        ask_id = await submit(request, **options)
        taken.append(await other.claim_next())  # another worker polls the queue the moment the ask is stored
        return ask_id

    h.service.submit = submit_then_poll  # type: ignore[method-assign]
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert outcome.status == "done" and taken == [None]
    ask = await h.service.load(outcome.ask_id)
    assert (ask.attempts, ask.claimed_by) == (1, h.service.worker_id)


async def test_the_final_writes_renew_the_claim_in_the_same_statement_and_a_stale_worker_makes_none(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    assert await h.service.claim_next() == ask_id
    ask = await h.service.load(ask_id)

    def recorder(worker_id: str) -> AskRecorder:
        return AskRecorder(db, h.port, h.service.roster, ask_id=ask_id, worker_id=worker_id, thread=ThreadRef("", ""))

    stale = Delivery(db, h.port, recorder("worker-gone"))
    with pytest.raises(ClaimLostError):
        await stale.notices(ask, "Alice", {})
    with pytest.raises(ClaimLostError):
        await stale.final_post(ask, "alice", status="done")
    row = await h.service.load(ask_id)
    assert (row.notices_posted, row.final_post, row.heartbeat_at) == (False, "none", ask.heartbeat_at)

    updates: list[str] = []

    def note(conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:  # noqa: ANN401
        if statement.lstrip().upper().startswith("UPDATE"):
            updates.append(statement)

    holder = Delivery(db, h.port, recorder(h.service.worker_id))
    event.listen(db.engine.sync_engine, "before_cursor_execute", note)
    try:
        await holder.notices(ask, "Alice", {})
        notices_updates = len(updates)
        await holder.final_post(ask, "alice", status="done")
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", note)
    row = await h.service.load(ask_id)
    assert (row.notices_posted, row.final_post, row.status) == (True, "posted", "done")
    assert row.heartbeat_at is not None and (ask.heartbeat_at is None or row.heartbeat_at > ask.heartbeat_at)
    # One statement renews the claim and marks the notices; one renews it and begins the post, one ends it.
    assert (notices_updates, len(updates)) == (1, 3)


async def test_the_end_of_an_ask_is_saved_with_its_claim_renewed_in_one_statement(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    assert await h.service.claim_next() == ask_id
    before = await h.service.load(ask_id)

    def recorder(worker_id: str) -> AskRecorder:
        return AskRecorder(db, h.port, h.service.roster, ask_id=ask_id, worker_id=worker_id, thread=ThreadRef("", ""))

    async with db.session() as session, session.begin():  # cancelled too: the lost claim is what a stale worker hears
        await session.execute(update(models.Ask).where(models.Ask.id == ask_id).values(cancel_requested_at=func.now()))
    with pytest.raises(ClaimLostError):
        await recorder("worker-gone").save_outcome(None, answer="x", failure=None, final_text="x", wall_s=1.0)
    assert (await h.service.load(ask_id)).final_text is None

    updates: list[str] = []

    def note(conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:  # noqa: ANN401
        if statement.lstrip().upper().startswith("UPDATE"):
            updates.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", note)
    try:
        await recorder(h.service.worker_id).save_outcome(
            None, answer="x", failure=None, final_text="x", wall_s=1.0, cancelling=True
        )
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", note)
    row = await h.service.load(ask_id)
    assert (row.answer, row.final_text, row.wall_s) == ("x", "x", before.wall_s + 1.0)
    assert row.heartbeat_at is not None and (before.heartbeat_at is None or row.heartbeat_at > before.heartbeat_at)
    assert len(updates) == 1
