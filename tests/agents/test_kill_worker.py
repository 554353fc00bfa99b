"""Kill tests: two worker processes share one PostgreSQL database; one is SIGKILLed mid-ask (or while the ask waits
on a member's approval); the other completes the ask, and exactly one final post reaches the requester."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.asks import models
from bot.asks.service import AskRequest
from bot.consent.pending import ApprovalRegistry, ApprovalStore, Click, decide_click
from bot.platform.port import ApprovalDecision, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from tests.fakes.ask_worker_process import exited, output, spawn
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.durable_port import read_posts
from tests.fakes.records import conversations, turns


async def _approvals(db: Database, ask_id: int) -> list[models.Approval]:
    async with db.session() as session:
        rows = await session.execute(select(models.Approval).where(models.Approval.ask_id == ask_id))
        return list(rows.scalars())


async def _saved_turns(db: Database, ask_id: int) -> int:
    total = 0
    for conversation in await conversations(db, ask_id):
        total += len(await turns(db, conversation.id))
    return total


@pytest.mark.postgres
async def test_sigkill_mid_ask_the_other_worker_finishes_with_one_final_post(
    db: Database, settings: Settings, tmp_path: Path
) -> None:
    if db.dialect != "postgresql":
        pytest.skip("several worker processes need PostgreSQL (SQLite runs a single worker)")
    world = two_fact_world(launch_with="carol")
    h = await build(db, world, settings=settings)
    world.save(tmp_path / "world.json")
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    url = db.engine.url.render_as_string(hide_password=False)

    first = spawn("worker-a", url, tmp_path, h.service.workspace_id)
    second = None
    try:
        deadline = time.monotonic() + 30
        while await _saved_turns(db, ask_id) < 3:
            assert time.monotonic() < deadline and first.poll() is None, output(tmp_path, "worker-a")[1]
            await asyncio.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
        killed_at_turns = await _saved_turns(db, ask_id)
        assert (await h.service.load(ask_id)).final_post == "none"  # really mid-ask

        second = spawn("worker-b", url, tmp_path, h.service.workspace_id)
        assert await exited(second, timeout_s=60) == 0, output(tmp_path, "worker-b")[1]
        assert f"finished ask {ask_id}" in output(tmp_path, "worker-b")[0]
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()

    ask = await h.service.load(ask_id)
    assert (ask.status, ask.claimed_by, ask.attempts, ask.final_post) == ("done", "worker-b", 2, "posted")
    assert "14 March" in ask.answer and "Bluebird" in ask.answer
    dm = world.dm(world.bot_id, "alice").id
    finals = [p for p in read_posts(tmp_path / "posts.jsonl") if p.channel_id == dm]
    assert len(finals) == 1 and f"transcripts show {ask_id}" in finals[0].text and finals[0].id == ask.final_message_id
    assert await _saved_turns(db, ask_id) > killed_at_turns


@pytest.mark.postgres
async def test_sigkill_while_an_ask_waits_on_an_approval_the_decision_still_counts(
    db: Database, settings: Settings, tmp_path: Path
) -> None:
    if db.dialect != "postgresql":
        pytest.skip("several worker processes need PostgreSQL (SQLite runs a single worker)")
    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})  # bob holds the launch date
    h = await build(db, world, settings=settings)
    world.save(tmp_path / "world.json")
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    url = db.engine.url.render_as_string(hide_password=False)

    first = spawn("worker-a", url, tmp_path, h.service.workspace_id)
    second = None
    try:
        deadline = time.monotonic() + 30
        while (await h.service.load(ask_id)).status != "waiting" or not await _approvals(db, ask_id):
            assert time.monotonic() < deadline and first.poll() is None, output(tmp_path, "worker-a")[1]
            await asyncio.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
        (approval,) = await _approvals(db, ask_id)
        assert approval.status == "pending" and (await h.service.load(ask_id)).final_post == "none"

        # Bob clicks Approve after the worker holding the prompt died: the click goes where a button's does.
        click = await decide_click(
            ApprovalStore(db), ApprovalRegistry(), approval.id, ApprovalDecision.APPROVED, member_id=approval.member_id
        )
        assert click.outcome is Click.DECIDED
        second = spawn("worker-b", url, tmp_path, h.service.workspace_id)
        assert await exited(second, timeout_s=60) == 0, output(tmp_path, "worker-b")[1]
        assert f"finished ask {ask_id}" in output(tmp_path, "worker-b")[0]
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()

    ask = await h.service.load(ask_id)
    assert (ask.status, ask.claimed_by, ask.attempts, ask.final_post) == ("done", "worker-b", 2, "posted")
    assert [(a.id, a.status) for a in await _approvals(db, ask_id)] == [(approval.id, "approved")]  # asked once
    bob_turns = [t for c in await conversations(db, ask_id) for t in await turns(db, c.id) if t.agent == "bob"]
    approved = [t for t in bob_turns if t.data.get("approval") == "approved"]
    assert len(approved) == 1 and "14 March" in approved[0].utterance
    assert "14 March" in (ask.answer or "")  # the approved text reached the answer
    dm = world.dm(world.bot_id, "alice").id
    finals = [p for p in read_posts(tmp_path / "posts.jsonl") if p.channel_id == dm]
    assert len(finals) == 1 and finals[0].id == ask.final_message_id
