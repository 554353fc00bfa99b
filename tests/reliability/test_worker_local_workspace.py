"""`askwith worker --workspace FILE`: a real worker process runs a local workspace's ask end to end on PostgreSQL.

This test plays the serving side: it mirrors a small world into a fresh PostgreSQL database and submits Alice's ask
as `/ask-with` does (queued, claimed by nobody). A separate `askwith worker --scripted --workspace <world file>`
process claims it, runs it with the scripted model (waiting ASKWITH_SCRIPTED_LATENCY_SECONDS per call) and finishes
it in the database, with the answer drawn from the workspace's memory; the world file, the serving side's, is left
as it was.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.asks import models
from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.conftest import _drop_postgres_database, _postgres_database
from tests.fakes.asks import QUESTION, build, two_fact_world


ROOT = Path(__file__).resolve().parents[2]
FINISHED = ("done", "failed", "cancelled")


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    url, name = await _postgres_database()  # skips when the server is unreachable (unless it is required)
    try:
        yield url
    finally:
        await _drop_postgres_database(name)


async def _finished(db: Database, ask_id: int, worker: subprocess.Popen[bytes], timeout_s: float) -> models.Ask:
    deadline = time.monotonic() + timeout_s
    while True:
        async with db.session() as session:
            ask = await session.get(models.Ask, ask_id, populate_existing=True)
        assert ask is not None
        if ask.status in FINISHED:
            return ask
        assert worker.poll() is None, "the worker exited"
        assert time.monotonic() < deadline, f"ask #{ask_id} still {ask.status}"
        await asyncio.sleep(0.1)


@pytest.mark.postgres
async def test_a_worker_process_runs_a_local_workspace_ask_to_its_answer(tmp_path: Path, postgres_url: str) -> None:
    settings = Settings.load(env={}, env_file=None).replace(
        database_url=postgres_url, data_dir=tmp_path / "data", embedder="hash"
    )
    world_file = tmp_path / "team.json"
    world = two_fact_world()
    world.save(world_file)
    saved = world_file.read_bytes()
    db = await Database.open(settings)
    worker: subprocess.Popen[bytes] | None = None
    try:
        harness = await build(db, world, settings=settings)  # the serving side: the workspace mirrored, asks taken in
        ask_id = await harness.service.submit(AskRequest("alice", ["bob"], QUESTION))
        env = {
            **os.environ, "ASKWITH_DATABASE_URL": postgres_url, "ASKWITH_DATA_DIR": str(settings.data_dir),
            "ASKWITH_EMBEDDER": "hash", "ASKWITH_SCRIPTED_LATENCY_SECONDS": "0.05",
        }  # fmt: skip
        with (tmp_path / "worker.log").open("wb") as log:
            worker = subprocess.Popen(
                [sys.executable, "-m", "bot", "worker", "--scripted", "--workspace", str(world_file)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        ask = await _finished(db, ask_id, worker, timeout_s=60)
        async with db.session() as session:
            rows = await session.execute(select(models.LLMCall.latency_s).where(models.LLMCall.ask_id == ask_id))
            latencies = list(rows.scalars())
    finally:
        if worker is not None and worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
            await asyncio.to_thread(worker.wait, 30)
        await db.close()
    logs = (tmp_path / "worker.log").read_text()[-3000:]
    assert (ask.status, ask.final_post) == ("done", "posted"), (ask.failure, logs)
    assert worker is not None and int((ask.claimed_by or "").rsplit(":", 2)[1]) == worker.pid  # not this process
    assert "Bluebird" in (ask.answer or ""), ask.answer  # from alice's own notes, found in memory by the worker
    assert latencies and min(latencies) >= 0.05  # the scripted model waited as ASKWITH_SCRIPTED_LATENCY_SECONDS says
    assert world_file.read_bytes() == saved  # the worker's answer went into its own copy, never the file
