"""One `askwith serve` and two `askwith worker` processes on one PostgreSQL database, laid out as docs/deploy.md
describes: `serve` takes Slack's traffic and leaves every ask to the workers (ASKWITH_SERVE_RUNS_ASKS=false).

Alice asks the bot about Bob's launch date; Bob shares only what he approves (share=ask). A worker runs the ask and
posts Bob's Approve / Deny prompt; Bob's click comes back to `serve` as Slack sends it (a signed block_actions POST to
/slack/events); the worker reads the decision from the database, and the one answer Alice gets carries the approved
text. Without the click the prompt times out as a deny and the launch date never reaches the answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from adapters.slack.blocks import APPROVE_ACTION
from bot.asks import models
from bot.store.db import Database
from tests.conftest import _drop_postgres_database, _postgres_database
from tests.fakes.asks import QUESTION
from tests.fakes.served_slack import ServedSlack
from tests.reliability.test_serve_restart_retries import _asks, _until


APPROVED_FACT = "14 March"  # in Bob's DM with Erin: only Bob's approval lets his agent pass it on
WORKERS = ("worker-a", "worker-b")
SETTINGS = {
    "ASKWITH_SERVE_RUNS_ASKS": "false",
    # Shorter than the test's wait for the answer: a lost click ends as a deny (an answer without the launch date),
    # not as a hung test; far longer than the click takes.
    "ASKWITH_APPROVAL_TIMEOUT_SECONDS": "45",
    "ASKWITH_WORKER_HEARTBEAT_SECONDS": "0.5",
}


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    url, name = await _postgres_database()  # skips when the server is unreachable (unless it is required)
    try:
        yield url
    finally:
        await _drop_postgres_database(name)


async def _approvals(served: ServedSlack, ask_id: int) -> list[tuple[str, str]]:
    db = await Database.open(served.settings(), migrate=False)
    try:
        async with db.session() as session:
            rows = await session.execute(select(models.Approval).where(models.Approval.ask_id == ask_id))
            return [(row.member_id, row.status) for row in rows.scalars()]
    finally:
        await db.close()


async def _ask_when(served: ServedSlack, statuses: tuple[str, ...], timeout_s: float) -> models.Ask:
    """The one ask, once its status is among `statuses`."""
    deadline = time.monotonic() + timeout_s
    while not ((asks := await _asks(served)) and asks[0].status in statuses):
        assert time.monotonic() < deadline, f"ask not {statuses}: {[(a.id, a.status) for a in asks]}"
        await asyncio.sleep(0.1)
    return asks[0]


@pytest.mark.postgres
async def test_bob_approves_in_serve_while_a_worker_runs_the_ask_and_the_answer_carries_it(
    tmp_path: Path, postgres_url: str
) -> None:
    served = ServedSlack(
        tmp_path, asks_before_sharing=("UBOB",), database_url=postgres_url, env=SETTINGS, workers=WORKERS
    )
    async with served, httpx.AsyncClient(base_url=served.url, timeout=30) as http:
        workers = dict(served.workers)
        dm = served.fake.world.dm(served.fake.world.bot_id, "UALICE").id
        said = served.dm_event("UALICE", f"<@UBOB> {QUESTION}", event_id="Ev0WORKERS01")
        assert (await http.post("/slack/events", content=said[0], headers=said[1])).status_code == 200

        (approval_id,) = await _until(lambda: served.approval_ids("UBOB"), "Bob's approval prompt", timeout_s=60)
        waiting = await _ask_when(served, ("waiting",), timeout_s=30)
        assert not any(APPROVED_FACT in text for text in served.fake.posts(dm))  # nothing shared before Bob decides
        click = served.click("UBOB", APPROVE_ACTION, approval_id)
        assert (await http.post("/slack/events", content=click[0], headers=click[1])).status_code == 200

        ask = await _ask_when(served, ("done", "failed", "cancelled"), timeout_s=90)
        approvals = await _approvals(served, ask.id)
        alive = {name: worker.poll() is None for name, worker in workers.items()}
        posts = served.fake.posts(dm)
    assert (ask.status, ask.final_post, ask.attempts) == ("done", "posted", 1), ask.failure
    # Run by one worker process from start to end: the claim names its host and process id, never serve's.
    assert ask.claimed_by is not None and waiting.claimed_by == ask.claimed_by
    runner = int(ask.claimed_by.rsplit(":", 2)[1])
    assert runner in {worker.pid for worker in workers.values()}
    assert served.proc is not None and runner != served.proc.pid
    assert alive == dict.fromkeys(WORKERS, True), [served.worker_logs(name)[-2000:] for name in WORKERS]
    assert APPROVED_FACT in (ask.answer or ""), ask.answer
    assert approvals == [("UBOB", "approved")]  # asked once, decided by the click serve heard
    answers = [text for text in posts if "Bluebird" in text or APPROVED_FACT in text]
    assert len(answers) == 1 and APPROVED_FACT in answers[0], posts  # one answer, with what Bob approved
