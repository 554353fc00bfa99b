"""Kill test: two worker processes share one PostgreSQL database; one is SIGKILLed mid-ask; the other completes
the ask, and exactly one final post reaches the requester."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.durable_port import read_posts
from tests.fakes.records import conversations, turns


ROOT = Path(__file__).parent.parent.parent


def _spawn(name: str, db_url: str, tmp: Path, workspace_id: int) -> subprocess.Popen[str]:
    args = [
        sys.executable, "-m", "tests.fakes.ask_worker_process", "--db", db_url, "--data", str(tmp / name),
        "--world", str(tmp / "world.json"), "--posts", str(tmp / "posts.jsonl"), "--name", name,
        "--workspace-id", str(workspace_id), "--latency", "0.15", "--stale", "1.0", "--heartbeat", "0.2",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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

    first = _spawn("worker-a", url, tmp_path, h.service.workspace_id)
    second = None
    try:
        deadline = time.monotonic() + 30
        while await _saved_turns(db, ask_id) < 3:
            assert time.monotonic() < deadline and first.poll() is None, first.stderr.read() if first.stderr else ""
            await asyncio.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(10)
        killed_at_turns = await _saved_turns(db, ask_id)
        assert (await h.service.load(ask_id)).final_post == "none"  # really mid-ask

        second = _spawn("worker-b", url, tmp_path, h.service.workspace_id)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert f"finished ask {ask_id}" in out
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
