"""Cancel across processes: a worker process runs the ask; this process cancels it; the worker stops at its next
heartbeat, posts the one final "cancelled" text and nothing after it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from adapters.local.workspace import HIDDEN_CHANNEL_ID
from bot.asks.control import CancelResult
from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.agents.test_kill_worker import _saved_turns
from tests.fakes.ask_worker_process import exited, output, spawn
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.durable_port import read_posts


HEARTBEAT_S = 0.2  # what `spawn` gives the worker


@pytest.mark.postgres
async def test_a_worker_process_stops_at_its_heartbeat_and_posts_only_the_cancel(
    db: Database, settings: Settings, tmp_path: Path
) -> None:
    if db.dialect != "postgresql":
        pytest.skip("a worker in another process needs PostgreSQL (SQLite runs a single worker)")
    world = two_fact_world(launch_with="carol")
    h = await build(db, world, settings=settings)
    world.save(tmp_path / "world.json")
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    worker = spawn("worker-a", db.engine.url.render_as_string(hide_password=False), tmp_path, h.service.workspace_id)
    try:
        deadline = time.monotonic() + 30
        while await _saved_turns(db, ask_id) < 2:
            assert time.monotonic() < deadline and worker.poll() is None, output(tmp_path, "worker-a")[1]
            await asyncio.sleep(0.05)
        assert await h.service.cancel(ask_id, by="alice") is CancelResult.STOPPING  # it runs in the other process
        cancelled_at = time.monotonic()
        posts_at_cancel = len(read_posts(tmp_path / "posts.jsonl"))
        code = await exited(worker, timeout_s=30)
        out, err = output(tmp_path, "worker-a")
        assert code == 0, err
        assert f"finished ask {ask_id}" in out
    finally:
        if worker.poll() is None:
            worker.kill()

    ask = await h.service.load(ask_id)
    assert (ask.status, ask.claimed_by, ask.final_post, ask.answer) == ("cancelled", "worker-a", "posted", None)
    assert ask.finished_at is not None and time.monotonic() - cancelled_at < 30
    posts = read_posts(tmp_path / "posts.jsonl")
    after = posts[posts_at_cancel:]
    dm = world.dm(world.bot_id, "alice").id
    # At most the turn in flight when the heartbeat came reaches the hidden thread; besides that only the share
    # notice of what bob's agent had already shared, and the one final post.
    hidden = [p for p in after if p.channel_id == HIDDEN_CHANNEL_ID]
    assert len(hidden) <= 1, [p.text for p in hidden]
    notices = [p for p in after if p.channel_id not in (HIDDEN_CHANNEL_ID, dm)]
    assert all(p.channel_id == world.dm(world.bot_id, "bob").id and "shared" in p.text for p in notices)
    finals = [p for p in posts if p.channel_id == dm]
    assert len(finals) == 1 and "cancelled by Alice" in finals[0].text and finals[0] == after[-1]
