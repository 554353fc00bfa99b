"""SIGTERM to `askwith ask` while the model is thinking (a real process against a loopback model that stalls).

Before: SIGTERM killed the process outright: a local model server it had started kept running, and the ask stayed
`running` forever in `transcripts list`. After: SIGTERM takes Ctrl-C's path: the command is cancelled, everything it
opened is closed, the ask is recorded as `interrupted`, and the process exits (130) at once. Also when the command
was started with SIGINT ignored, as a background job of a script is: it then ignored SIGTERM too, until the model
answered."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import pytest
from aiohttp import web

from tests.e2e.cli_helpers import start_askwith


def _asks(data_dir: Path) -> list[tuple[str]]:
    path = data_dir / "askwith.db"
    if not path.exists():
        return []
    with closing(sqlite3.connect(path)) as conn:
        try:
            return conn.execute("SELECT status FROM ask").fetchall()
        except sqlite3.OperationalError:  # not migrated yet
            return []


@pytest.fixture
async def stalling_model(tmp_path: Path) -> AsyncIterator[tuple[str, asyncio.Event]]:
    """An OpenAI-compatible endpoint that answers ingestion's summaries, then stalls once an ask runs."""
    called = asyncio.Event()

    async def completions(_request: web.Request) -> web.Response:
        if not _asks(tmp_path):
            return web.json_response({
                "id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "A summary."},
                             "finish_reason": "stop"}],
            })  # fmt: skip
        called.set()
        await asyncio.sleep(3600)
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1", called
    finally:
        await runner.cleanup()


# Started as a background job of a script, a command inherits SIGINT ignored: SIGTERM must still stop it.
@pytest.mark.parametrize("sigint_ignored", [False, True], ids=["foreground", "sigint-ignored"])
async def test_sigterm_interrupts_the_ask_cleanly(
    tmp_path: Path, stalling_model: tuple[str, asyncio.Event], sigint_ignored: bool
) -> None:
    base_url, called = stalling_model
    proc = start_askwith(
        tmp_path, "ask", "--workspace", "acme", "--as", "alice", "--with", "bob", "When is the offsite?",
        sigint_ignored=sigint_ignored,
        ASKWITH_LLM_BASE_URL=base_url, ASKWITH_LLM_MODEL="m", ASKWITH_LLM_TIMEOUT_SECONDS="3000",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not called.is_set():  # until the ask runs, its first model call in flight
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate(timeout=30)
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert proc.returncode == 130
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)
    assert _asks(tmp_path) == [("interrupted",)]
