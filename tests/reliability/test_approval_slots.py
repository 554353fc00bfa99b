"""Asks waiting on a `share=ask` member's approval, run by the real `AskWorker`.

Before: a waiting ask kept its worker slot, so 4 asks waiting on approvals blocked every queued ask until their
time-out, and the decision lived only in the memory of the process that posted the prompt. After: the wait is a
state of the ask in the database (`waiting`, with the approval row), the slot is free meanwhile, a decision stored
by any process resumes the ask, and a worker that stops gives its asks back so the next one resumes them at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from sqlalchemy import select

from bot.asks import models
from bot.asks.service import AskRequest, AskService
from bot.asks.worker import AskWorker
from bot.consent.pending import ApprovalStore
from bot.platform.port import ApprovalDecision, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.records import conversations, turns


DEADLINE_S = 90.0  # generous: the asks take well under a second each when the machine is idle
ASK_BOB = {"bob": MemberPolicy(share=SharePolicy.ASK)}


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def _status(db: Database, ask_id: int) -> str:
    async with db.session() as session:
        return (await session.get(models.Ask, ask_id)).status  # type: ignore[union-attr]


async def _approvals(db: Database, ask_id: int) -> list[models.Approval]:
    async with db.session() as session:
        rows = await session.execute(select(models.Approval).where(models.Approval.ask_id == ask_id))
        return list(rows.scalars())


async def _statuses_are(db: Database, ids: list[int], status: str) -> bool:
    return all([await _status(db, i) == status for i in ids])


def _settings(settings: Settings) -> Settings:
    return settings.replace(approval_timeout_seconds=3600.0, worker_heartbeat_seconds=0.2)


async def test_waiting_asks_free_their_slots_and_a_stored_decision_resumes_one(
    db: Database, settings: Settings
) -> None:
    h = await build(db, two_fact_world(policies=ASK_BOB), settings=_settings(settings))
    waiting = [await h.service.submit(AskRequest("alice", ["bob"], QUESTION)) for _ in range(2)]
    ordinary = [await h.service.submit(AskRequest("alice", ["carol"], "When is lunch with Bob?")) for _ in range(3)]
    worker = AskWorker(h.service, poll_seconds=0.05, concurrency=2)  # both slots go to the waiting asks first
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop=stop))
    try:
        await _until(lambda: _statuses_are(db, ordinary, "done"), "the queued asks to finish")
        await _until(lambda: _statuses_are(db, waiting, "waiting"), "the approval asks to wait")
        (approval,) = await _approvals(db, waiting[0])
        assert approval.status == "pending" and approval.member_id == "bob"

        # The click, as another process (say `askwith serve` receiving Slack's request) records it.
        assert await ApprovalStore(db).decide(approval.id, ApprovalDecision.APPROVED, member_id="bob")
        await _until(lambda: _statuses_are(db, [waiting[0]], "done"), "the approved ask to resume and finish")
        assert await _status(db, waiting[1]) == "waiting"
        assert not await ApprovalStore(db).decide(approval.id, ApprovalDecision.DENIED)  # decided once
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
    answer = (await h.service.load(waiting[0])).answer
    assert answer is not None and "14 March" in answer
    bob_turns = [t for c in await conversations(db, waiting[0]) for t in await turns(db, c.id) if t.agent == "bob"]
    assert [t.data["approval"] for t in bob_turns if t.data.get("approval")] == ["approved"]


async def test_a_stopped_worker_gives_a_waiting_ask_back_and_the_next_resumes_it_at_once(
    db: Database, settings: Settings
) -> None:
    # Worker takeover after silence is left at its default (60 s): resuming must not depend on it.
    h = await build(db, two_fact_world(policies=ASK_BOB), settings=_settings(settings))
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    first = asyncio.create_task(AskWorker(h.service, poll_seconds=0.05).run(stop=asyncio.Event()))
    await _until(lambda: _statuses_are(db, [ask_id], "waiting"), "the ask to wait on bob")
    first.cancel()  # the worker process shuts down
    await asyncio.gather(first, return_exceptions=True)
    assert await _status(db, ask_id) == "queued"

    (approval,) = await _approvals(db, ask_id)
    assert await ApprovalStore(db).decide(approval.id, ApprovalDecision.APPROVED, member_id="bob")
    restarted = AskService(
        settings=h.service.settings, db=db, port=h.port, llm=h.llm, memory=h.service.memory,
        workspace_id=h.service.workspace_id,
    )  # fmt: skip
    started = time.monotonic()
    stop = asyncio.Event()
    second = asyncio.create_task(AskWorker(restarted, poll_seconds=0.05).run(stop=stop))
    try:
        await _until(lambda: _statuses_are(db, [ask_id], "done"), "the restarted worker to finish the ask")
    finally:
        stop.set()
        await asyncio.wait_for(second, DEADLINE_S)
    assert time.monotonic() - started < h.service.settings.worker_stale_seconds
    assert [a.id for a in await _approvals(db, ask_id)] == [approval.id]  # the same question, not asked again
    assert "14 March" in ((await restarted.load(ask_id)).answer or "")
