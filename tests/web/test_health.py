"""`/healthz` answers within its own bound even when the database does not (an exhausted pool waits 30 s)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
from starlette.requests import Request

from bot.web.routes import health


class StalledDatabase:
    """A database whose pool never hands out a connection (every one checked out elsewhere)."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()

    async def check(self) -> None:  # `Database.check`: a session's trivial query, here waiting on the pool forever
        self.waiting.set()
        await asyncio.Event().wait()  # never set: the pool's own timeout is far longer than the probe's


def _request(db: StalledDatabase) -> Request:
    runtime = SimpleNamespace(db=db, llm=None, platforms=[])
    return Request({"type": "http", "method": "GET", "path": "/healthz", "headers": [], "state": {"runtime": runtime}})


async def test_a_stalled_database_check_answers_503_within_the_probes_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "DATABASE_CHECK_S", 0.2, raising=False)
    db = StalledDatabase()
    started = time.monotonic()
    probe = asyncio.create_task(health.healthz(_request(db)))
    done, _ = await asyncio.wait({probe}, timeout=10)
    if not done:  # the old probe waits on the pool: end it rather than leave the test hanging
        probe.cancel()
    assert done, "healthz still waiting on the database after 10 s"
    response = probe.result()
    assert db.waiting.is_set()
    assert response.status_code == 503
    assert response.body == b'{"status":"unavailable","database":"timeout"}'
    assert time.monotonic() - started < 5
