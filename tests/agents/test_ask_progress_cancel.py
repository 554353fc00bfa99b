"""Progress stages of an ask (stored and published in-process) and cancelling it (in-process, queued, and from
another worker at its heartbeat)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select, update

from adapters.local.workspace import HIDDEN_CHANNEL_ID
from bot.agents.progress import Stage
from bot.asks import models
from bot.asks.control import CancelResult
from bot.asks.progress import Progress, poll_progress, read_progress, watch_progress
from bot.asks.record import AskRecorder
from bot.asks.service import AskRequest, AskService
from bot.asks.worker import AskWorker
from bot.errors import AskCancelledError, AskNotAllowedError
from bot.platform.port import SharePolicy, ThreadRef
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from tests.fakes.asks import QUESTION, Harness, build, two_fact_world


def _bot_posts(h: Harness) -> list[tuple[str, str]]:
    return [(c, m.text) for c, msgs in h.world.messages.items() for m in msgs if m.sender_id == h.world.bot_id]


async def _stages_of(h: Harness, ask_id: int, seen: list[Progress]) -> None:
    async for progress in h.service.progress.subscribe(ask_id):
        seen.append(progress)


async def test_an_ask_reports_its_stages_in_order_and_stores_the_last(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings, latency_s=0.01)
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    assert (await read_progress(db, ask_id)).stage is Stage.QUEUED
    calls: list[Progress] = []
    h.service.progress.listen(ask_id, calls.append)
    seen: list[Progress] = []
    watcher = asyncio.create_task(_stages_of(h, ask_id, seen))
    await asyncio.sleep(0)
    assert await h.service.claim(ask_id)
    outcome = await h.service.process(ask_id)
    await asyncio.wait_for(watcher, 10)

    stages = [p.stage for p in calls]
    assert stages[0] is Stage.PLANNING and stages[-1] is Stage(outcome.status) is Stage.DONE
    for stage in (Stage.SEARCHING, Stage.TALKING, Stage.BRINGING_IN, Stage.AGREEING):
        assert stage in stages, stages
    assert stages.index(Stage.AGREEING) > max(i for i, s in enumerate(stages) if s is Stage.TALKING)
    brought = next(p for p in calls if p.stage is Stage.BRINGING_IN)
    assert brought.detail == "carol" and "Carol" in brought.text
    talking = next(p for p in calls if p.stage is Stage.TALKING)
    assert talking.detail == "bob" and talking.text == "Talking with Bob's agent…"
    assert seen and seen[-1].stage is Stage.DONE  # the subscriber ends at the final stage
    stored = await read_progress(db, ask_id)
    assert stored.stage is Stage.DONE and stored.final
    # No extra model call for progress: the stages come from points the ask passes anyway.
    assert len(h.backend.requests) == (await h.service.load(ask_id)).llm_calls


async def test_cancel_in_process_stops_at_once_and_agents_post_nothing_more(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(launch_with="carol"), settings=settings, latency_s=0.05)
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    talking = asyncio.Event()
    h.service.progress.listen(ask_id, lambda p: p.stage is Stage.TALKING and talking.set())
    assert await h.service.claim(ask_id)
    run = asyncio.create_task(h.service.process(ask_id))
    await asyncio.wait_for(talking.wait(), 20)

    with pytest.raises(AskNotAllowedError):
        await h.service.cancel(ask_id, by="bob")  # not the requester, not an admin
    calls_at_cancel = len(h.backend.requests)
    assert await h.service.cancel(ask_id, by="alice") is CancelResult.CANCELLED
    posts_after_cancel = _bot_posts(h)
    outcome = await asyncio.wait_for(run, 10)
    await asyncio.sleep(0.3)  # anything still scheduled would show up now

    assert outcome.status == "cancelled"
    ask = await h.service.load(ask_id)
    assert (ask.status, ask.cancelled_by, ask.final_post, ask.answer) == ("cancelled", "alice", "posted", None)
    assert _bot_posts(h) == posts_after_cancel  # nothing posted after the cancel returned
    assert len(h.backend.requests) <= calls_at_cancel + 2  # calls already in flight at most, none started after
    dm = h.world.dm(h.world.bot_id, "alice").id
    finals = [m.text for m in h.world.messages[dm] if f"show {ask_id}" in m.text]
    assert len(finals) == 1 and "cancelled by Alice" in finals[0]
    assert (await read_progress(db, ask_id)).stage is Stage.CANCELLED
    assert await h.service.cancel(ask_id, by="alice") is CancelResult.FINISHED


async def test_a_queued_ask_is_cancelled_without_running(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings.replace(web_admins="erin"))
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    hidden_before = len(h.world.messages.get(HIDDEN_CHANNEL_ID, []))
    assert await h.service.cancel(ask_id, by="erin") is CancelResult.CANCELLED  # an admin may
    ask = await h.service.load(ask_id)
    assert (ask.status, ask.cancelled_by, ask.hidden_thread_id) == ("cancelled", "erin", None)
    assert not h.backend.requests and len(h.world.messages.get(HIDDEN_CHANNEL_ID, [])) == hidden_before
    assert await h.service.claim_next() is None


async def test_a_worker_in_another_process_stops_at_its_heartbeat(db: Database, settings: Settings) -> None:
    settings = settings.replace(worker_heartbeat_seconds=0.1)
    # Model calls slow enough that the talk outlasts the cancel (at 0.05 s an ask could end before it was asked).
    h = await build(db, two_fact_world(), settings=settings, latency_s=0.25)
    other = AskService(
        settings=settings, db=db, port=h.port, llm=h.llm, memory=h.service.memory, workspace_id=h.service.workspace_id,
        worker_id="worker-b",
    )  # fmt: skip
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    assert await h.service.claim(ask_id)
    run = asyncio.create_task(h.service.process(ask_id))
    async for progress in poll_progress(db, ask_id, interval_s=0.02):  # what another process can watch
        if progress.stage is Stage.TALKING:
            break
    assert await other.cancel(ask_id, by="alice") is CancelResult.STOPPING  # it runs elsewhere
    outcome = await asyncio.wait_for(run, 10)
    assert outcome.status == "cancelled"
    ask = await other.load(ask_id)
    assert (ask.status, ask.claimed_by) == ("cancelled", h.service.worker_id)


async def test_a_cancel_while_waiting_for_an_approval_ends_the_ask(db: Database, settings: Settings) -> None:
    settings = settings.replace(worker_heartbeat_seconds=0.1, approval_timeout_seconds=30)
    never_answers = asyncio.Event()

    async def silent(_request: object) -> object:
        await never_answers.wait()
        raise AssertionError("unreachable")

    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    h = await build(db, world, settings=settings, approvals=silent)  # type: ignore[arg-type]
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], "When is the launch date?"))
    waiting = asyncio.Event()
    waits: list[Progress] = []
    h.service.progress.listen(ask_id, lambda p: p.stage is Stage.WAITING and (waits.append(p), waiting.set()))
    assert await h.service.claim(ask_id)
    run = asyncio.create_task(h.service.process(ask_id))
    await asyncio.wait_for(waiting.wait(), 20)
    assert (waits[0].detail, waits[0].text) == ("bob", "Waiting for Bob's agent…")  # not why: that is Bob's
    assert await h.service.cancel(ask_id, by="alice") is CancelResult.CANCELLED
    assert (await asyncio.wait_for(run, 10)).status == "cancelled"
    async with db.session() as session:
        approvals = (await session.execute(select(models.Approval).where(models.Approval.ask_id == ask_id))).scalars()
        assert [a.status for a in approvals] == ["timeout"]  # closed: a late click changes nothing


async def test_an_ask_ends_answered_or_cancelled_never_both(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    done = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    assert await h.service.cancel(done.ask_id, by="alice") is CancelResult.FINISHED
    assert (await h.service.load(done.ask_id)).cancel_requested_at is None

    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    assert await h.service.claim(ask_id)
    recorder = AskRecorder(db, h.port, h.service.roster, ask_id=ask_id, worker_id=h.service.worker_id,
                           thread=ThreadRef("", ""))  # fmt: skip
    async with db.session() as session, session.begin():  # a cancel recorded just before the answer is saved
        await session.execute(update(models.Ask).where(models.Ask.id == ask_id).values(cancel_requested_at=func.now()))
    assert await recorder.heartbeat() is True
    with pytest.raises(AskCancelledError):
        await recorder.save_outcome(None, answer="x", failure=None, final_text="x", wall_s=0.0)
    assert (await h.service.load(ask_id)).final_text is None
    assert (await h.service.process(ask_id)).status == "cancelled"


async def test_watching_an_ask_sees_its_stages_here_and_from_another_process(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings, latency_s=0.02)
    other = AskService(
        settings=settings, db=db, port=h.port, llm=h.llm, memory=h.service.memory, workspace_id=h.service.workspace_id,
        worker_id="worker-b",
    )  # fmt: skip
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    here = [
        p.stage async for p in _take_all(watch_progress(db, h.service.progress, ask_id, interval_s=5.0), h, ask_id)
    ]
    assert here[0] is Stage.QUEUED and here[-1] is Stage.DONE and Stage.TALKING in here  # the hub: no 5 s polls

    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    elsewhere = [
        p.stage async for p in _take_all(watch_progress(db, other.progress, ask_id, interval_s=0.02), h, ask_id)
    ]
    assert elsewhere[0] is Stage.QUEUED and elsewhere[-1] is Stage.DONE and len(elsewhere) >= 3


async def _take_all(watch: AsyncIterator[Progress], h: Harness, ask_id: int) -> AsyncIterator[Progress]:
    """Start the ask once the watch has begun, then pass its stages on."""
    run: asyncio.Task[object] | None = None
    async for progress in watch:
        if run is None:
            assert await h.service.claim(ask_id)
            run = asyncio.create_task(h.service.process(ask_id))
        yield progress
    assert run is not None
    await asyncio.wait_for(run, 10)


async def test_a_worker_keeps_its_slots_when_an_ask_waiting_for_approval_is_cancelled(
    db: Database, settings: Settings
) -> None:
    settings = settings.replace(worker_heartbeat_seconds=0.1, approval_timeout_seconds=30)
    never_answers = asyncio.Event()

    async def silent(_request: object) -> object:
        await never_answers.wait()
        raise AssertionError("unreachable")

    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    h = await build(db, world, settings=settings, approvals=silent)  # type: ignore[arg-type]
    worker = AskWorker(h.service, poll_seconds=0.02, concurrency=1)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop=stop))
    try:
        waiting_id = await h.service.submit(AskRequest("alice", ["bob"], "When is the launch date?"))
        waiting = asyncio.Event()
        h.service.progress.listen(waiting_id, lambda p: p.stage is Stage.WAITING and waiting.set())
        await asyncio.wait_for(waiting.wait(), 20)
        # Cancelled from "another process": noticed at the heartbeat, not through this service's stop events.
        other = AskService(
            settings=settings, db=db, port=h.port, llm=h.llm, memory=h.service.memory,
            workspace_id=h.service.workspace_id, worker_id="elsewhere",
        )  # fmt: skip
        assert await other.cancel(waiting_id, by="alice") is CancelResult.STOPPING
        ended = asyncio.Event()
        h.service.progress.listen(waiting_id, lambda p: p.final and ended.set())
        await asyncio.wait_for(ended.wait(), 10)
        nxt = await h.service.submit(AskRequest("alice", ["carol"], "Lunch on Friday?"))
        for _ in range(500):
            if (await h.service.load(nxt)).status in ("done", "unsupported", "failed"):
                break
            await asyncio.sleep(0.02)
    finally:
        stop.set()
        await asyncio.wait_for(running, 20)
    assert (await h.service.load(waiting_id)).status == "cancelled"
    assert (await h.service.load(nxt)).status in ("done", "unsupported")
    assert worker._slots._value == 1  # noqa: SLF001 - given back exactly once: never more slots than configured
