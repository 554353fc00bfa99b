"""`askwith serve` SIGKILLed during a Slack retry storm: a member's message to the bot was acknowledged and its ask is
under way (waiting on Bob's approval), the process dies, Slack's redeliveries of the same event hit the dead address,
then a new `serve` on the same database. The redeliveries are dropped, the new process resumes the ask, and the member
gets exactly one answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from sqlalchemy import select

from adapters.slack.blocks import APPROVE_ACTION
from bot.asks import models
from bot.store.db import Database
from tests.fakes.asks import QUESTION
from tests.fakes.served_slack import ServedSlack


T = TypeVar("T")
EVENT_ID = "Ev0RESTART01"
UNFINISHED = ("queued", "running", "waiting")
# The new process takes a silent ask over after this long (the default is a minute).
FAST_TAKEOVER = {"ASKWITH_WORKER_STALE_SECONDS": "2", "ASKWITH_WORKER_HEARTBEAT_SECONDS": "0.5"}


async def _until(check: Callable[[], T], what: str, timeout_s: float = 90.0) -> T:
    deadline = time.monotonic() + timeout_s
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)
    return found


async def _asks(served: ServedSlack) -> list[models.Ask]:
    db = await Database.open(served.settings(), migrate=False)
    try:
        async with db.session() as session:
            return list((await session.execute(select(models.Ask).order_by(models.Ask.id))).scalars())
    finally:
        await db.close()


async def test_serve_killed_mid_ask_during_a_retry_storm_answers_once(tmp_path: Path) -> None:
    async with ServedSlack(tmp_path, asks_before_sharing=("UBOB",), env=FAST_TAKEOVER) as served:
        dm = served.fake.world.dm(served.fake.world.bot_id, "UALICE").id
        text = f"<@UBOB> {QUESTION}"
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:
            first = served.dm_event("UALICE", text, event_id=EVENT_ID)
            assert (await http.post("/slack/events", content=first[0], headers=first[1])).status_code == 200
            approval_id = (await _until(lambda: served.approval_ids("UBOB"), "the ask to wait on Bob"))[0]
            await served.kill()

            retry = served.dm_event("UALICE", text, retry=1, event_id=EVENT_ID)
            with pytest.raises(httpx.ConnectError):  # Slack's first retry meets the dead address
                await http.post("/slack/events", content=retry[0], headers=retry[1])
            await served.restart()
            for number in (2, 3):
                retry = served.dm_event("UALICE", text, retry=number, event_id=EVENT_ID)
                assert (await http.post("/slack/events", content=retry[0], headers=retry[1])).status_code == 200
            clicked: set[str] = set()
            deadline = time.monotonic() + 90
            while not (asks := await _asks(served)) or any(ask.status in UNFINISHED for ask in asks):
                assert time.monotonic() < deadline, served.logs()[-3000:]
                for pending in {approval_id, *served.approval_ids("UBOB")} - clicked:  # Bob approves each prompt
                    click = served.click("UBOB", APPROVE_ACTION, pending)
                    assert (await http.post("/slack/events", content=click[0], headers=click[1])).status_code == 200
                    clicked.add(pending)
                await asyncio.sleep(0.2)
        posts = [m.text for m in served.fake.timeline.messages(dm) if m.sender_id == served.fake.world.bot_id]
    assert len(asks) == 1, [(ask.id, ask.status) for ask in asks]  # the redeliveries started no second ask
    (ask,) = asks
    assert (ask.status, ask.final_post, ask.attempts) == ("done", "posted", 2)  # resumed once, by the new process
    answers = [text for text in posts if "Bluebird" in text or "14 March" in text]
    assert len(answers) == 1 and "14 March" in answers[0], posts
