"""The policy-change latency of `benchmarks/consent.py --processes`, measured across two real processes.

A real `askwith serve --scripted` hosts Slack (against the fake Slack Web API) and a real `askwith worker --scripted`
runs asks, both on a fresh PostgreSQL database (dropped afterwards). Alice keeps asking Bob through serve's Slack
endpoint; Bob changes his share policy with `/askwith share ...` sent to serve as Slack sends it (a signed HTTP POST).
"in force after" is the time from just before that POST to the first share decision by Bob's outbox, in an ask the
worker process claimed, that records the new policy (read from the asks' stored turns, polled, never slept on).

Why not the local web workspace's Settings page: `askwith worker` runs the platforms' asks only (the local workspace
lives in `serve`), so a worker cannot take part there. Policies alternate auto <-> never: under `ask` a worker's
approval prompt cannot be clicked (README, "Running askwith"), so the ask would wait out its timeout.
"""

from __future__ import annotations

import asyncio
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from benchmarks.scratch_postgres import scratch_postgres
from bot.asks import models
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import QUESTION
from tests.fakes.served_slack import ServedSlack


TIMEOUT_S = 60.0  # per change: no obeying decision by then counts as a miss
POLL_S = 0.05
# Asks kept queued or running: serve's own worker (woken at once, 4 at a time) takes the first ones, the worker the
# rest, so the worker is sharing when the change comes.
IN_FLIGHT = 8


class ServedWithWorker(ServedSlack):
    """`ServedSlack` on a PostgreSQL database, plus one `askwith worker --scripted` on the same settings."""

    def __init__(self, workdir: Path, database_url: str) -> None:
        super().__init__(workdir)
        self.database_url = database_url
        self.worker: subprocess.Popen[str] | None = None

    def settings(self) -> Settings:
        return super().settings().model_copy(update={"database_url": self.database_url})

    def env(self) -> dict[str, str]:
        return {**super().env(), "ASKWITH_DATABASE_URL": self.database_url}

    async def __aenter__(self) -> ServedWithWorker:
        await super().__aenter__()
        try:
            with (
                (self.workdir / "worker-out.txt").open("w") as out,
                (self.workdir / "worker-err.txt").open("w") as err,
            ):
                self.worker = subprocess.Popen(
                    [sys.executable, "-m", "bot", "worker", "--scripted"], cwd=self.workdir, env=self.env(),
                    stdout=out, stderr=err, text=True,
                )  # fmt: skip
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.worker is not None and self.worker.poll() is None:
            self.worker.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(self.worker.wait, 60)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                await asyncio.to_thread(self.worker.wait, 10)
        await super().__aexit__(*exc)

    def worker_logs(self) -> str:
        return "".join(p.read_text() for p in (self.workdir / "worker-err.txt",) if p.exists())


async def measure(admin_url: str, changes: int) -> dict[str, Any]:
    """Create a database, run serve + worker on it, time `changes` policy changes; always drop the database."""
    async with scratch_postgres(admin_url, prefix="askwith_consent") as url:
        workdir = Path(tempfile.mkdtemp(prefix="askwith-consent-"))
        async with ServedWithWorker(workdir, url) as served:
            return await _changes(served, changes)


async def _changes(served: ServedWithWorker, changes: int) -> dict[str, Any]:
    db = await Database.open(served.settings(), migrate=False)
    try:
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:
            each = [await _one_change(served, db, http, "never" if i % 2 == 0 else "auto") for i in range(changes)]
    finally:
        await db.close()
    waited = [c["in_force_s"] for c in each if c["in_force_s"] is not None]
    return {
        "changes": changes, "in_force_p50_s": statistics.median(waited) if waited else None,
        "in_force_max_s": max(waited, default=None), "missed": changes - len(waited),
        "stale_after_change": sum(c["stale"] for c in each), "each": each,
    }  # fmt: skip


async def _one_change(served: ServedWithWorker, db: Database, http: httpx.AsyncClient, policy: str) -> dict[str, Any]:
    """One change while the worker runs an ask: how long the POST took, the seconds from just before it until the
    worker's first decision under `policy` (None: none within TIMEOUT_S), and the worker's decisions under the old
    policy stored after the POST began (a turn that read the policy before it counts too); `decisions`: the first
    few (seconds after, policy obeyed), to tell a stale read from a wait for the next turn."""
    worker = served.worker
    assert worker is not None
    await _worker_busy(served, db, http)
    changed_at = datetime.now(UTC)
    started = time.monotonic()
    body, headers = served.command("UBOB", f"share {policy}", command="/askwith")
    (await http.post("/slack/events", content=body, headers=headers)).raise_for_status()
    result: dict[str, Any] = {"policy": policy, "post_s": round(time.monotonic() - started, 3), "in_force_s": None}
    while time.monotonic() - started < TIMEOUT_S:
        if worker.poll() is not None:
            raise RuntimeError(f"askwith worker exited: {served.worker_logs()[-3000:]}")
        decisions = await _worker_decisions(db, worker.pid, changed_at)
        obeying = [at for at, seen in decisions if seen == policy]
        result["stale"] = sum(1 for at, seen in decisions if seen != policy and (not obeying or at < obeying[0]))
        if obeying:
            seen = [(round((at - changed_at).total_seconds(), 3), was) for at, was in decisions[:6]]
            return {**result, "in_force_s": seen[[w for _, w in seen].index(policy)][0], "decisions": seen}
        await _keep_asking(served, db, http)
        await asyncio.sleep(POLL_S)
    return result


async def _worker_busy(served: ServedWithWorker, db: Database, http: httpx.AsyncClient) -> None:
    """Keep asking until the worker process runs an ask, so the change meets a decision in flight there."""
    assert served.worker is not None
    deadline = time.monotonic() + TIMEOUT_S
    running = models.Ask.status == "running"
    while time.monotonic() < deadline:
        async with db.session() as session:
            mine = models.Ask.claimed_by.like(f"%:{served.worker.pid}:%")
            if (await session.execute(select(models.Ask.id).where(running, mine).limit(1))).first():
                return
        await _keep_asking(served, db, http)
        await asyncio.sleep(POLL_S)
    raise RuntimeError(f"askwith worker ran no ask in {TIMEOUT_S:g} s: {served.worker_logs()[-3000:]}")


async def _keep_asking(served: ServedWithWorker, db: Database, http: httpx.AsyncClient) -> None:
    """Alice asks Bob through serve until IN_FLIGHT asks are queued or running."""
    async with db.session() as session:
        rows = await session.execute(select(models.Ask.id).where(models.Ask.status.in_(("queued", "running"))))
        waiting = len(rows.all())
    for _ in range(IN_FLIGHT - waiting):
        body, headers = served.command("UALICE", f"<@UBOB|bob> {QUESTION}")
        (await http.post("/slack/events", content=body, headers=headers)).raise_for_status()


async def _worker_decisions(db: Database, pid: int, since: datetime) -> list[tuple[datetime, str]]:
    """(when, policy obeyed) of Bob's turns stored since `since` in asks the worker `pid` claimed: the policy its
    outbox recorded, or `never` when nothing of the turn went to the outbox."""
    stmt = (
        select(models.Turn.created_at, models.Turn.agent, models.Turn.data)
        .join(models.Conversation, models.Conversation.id == models.Turn.conversation_id)
        .join(models.Ask, models.Ask.id == models.Conversation.ask_id)
        .where(models.Ask.claimed_by.like(f"%:{pid}:%"), models.Turn.created_at >= since)
        .order_by(models.Turn.created_at)
    )
    async with db.session() as session:
        rows = (await session.execute(stmt)).all()
    found = []
    for at, agent, data in rows:
        sent = ((data or {}).get("sharing") or {}).get("sent")
        if agent == "bob":  # under `never` the agent takes its turn but nothing goes to its outbox
            found.append((at, str(sent["policy"]) if sent else "never"))
    return found
