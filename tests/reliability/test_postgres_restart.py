"""PostgreSQL restarting mid-ask, as a worker process sees it: every connection cut, new ones refused for two seconds,
then accepted again. The machine's server is left alone: the worker reaches it through a TCP proxy that plays the
restart (tests/fakes/tcp_proxy.py). The ask resumes and ends with exactly one final post, no turn or post twice.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest

from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.ask_worker_process import exited, output, spawn
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.fakes.durable_port import read_posts
from tests.fakes.records import conversations, turns
from tests.fakes.tcp_proxy import TcpProxy


DOWN_S = 2.0  # about as long as a PostgreSQL restart refuses connections


async def _saved_turns(db: Database, ask_id: int) -> list[tuple[int, int, str]]:
    return [(c.id, t.idx, t.agent) for c in await conversations(db, ask_id) for t in await turns(db, c.id)]


@pytest.mark.postgres
async def test_postgres_restarting_mid_ask_the_ask_resumes_with_one_final_post(
    db: Database, settings: Settings, tmp_path: Path
) -> None:
    if db.dialect != "postgresql":
        pytest.skip("the restart is played between a worker process and a PostgreSQL server")
    world = two_fact_world(launch_with="carol")  # a third agent is brought in: a longer ask, more writes
    h = await build(db, world, settings=settings)
    world.save(tmp_path / "world.json")
    ask_id = await h.service.submit(AskRequest("alice", ["bob"], QUESTION))
    url = db.engine.url
    proxy = TcpProxy(url.host or "127.0.0.1", url.port or 5432)
    await proxy.start()
    worker = spawn("worker-a", url.set(port=proxy.port).render_as_string(hide_password=False), tmp_path,
                   h.service.workspace_id, "--timeout", "120")  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while len(await _saved_turns(db, ask_id)) < 3:
            assert time.monotonic() < deadline and worker.poll() is None, output(tmp_path, "worker-a")[1]
            await asyncio.sleep(0.05)
        assert (await h.service.load(ask_id)).final_post == "none"  # really mid-ask
        await proxy.restart(down_s=DOWN_S)
        at_restart = len(await _saved_turns(db, ask_id))
        assert await exited(worker, timeout_s=120) == 0, output(tmp_path, "worker-a")[1]
    finally:
        if worker.poll() is None:
            worker.kill()
        await proxy.stop()
    assert f"finished ask {ask_id}" in output(tmp_path, "worker-a")[0]

    ask = await h.service.load(ask_id)
    assert (ask.status, ask.final_post) == ("done", "posted"), ask.failure
    assert "14 March" in (ask.answer or "") and "Bluebird" in (ask.answer or "")
    saved = await _saved_turns(db, ask_id)
    assert len(saved) > at_restart and len(set(saved)) == len(saved)
    posts = read_posts(tmp_path / "posts.jsonl")
    dm = world.dm(world.bot_id, "alice").id
    finals = [p for p in posts if p.channel_id == dm]
    assert len(finals) == 1 and finals[0].id == ask.final_message_id
    in_thread = Counter(p.text for p in posts if p.thread_id == ask.hidden_thread_id)
    assert in_thread and max(in_thread.values()) == 1, in_thread  # no turn shown twice in the ask's thread
