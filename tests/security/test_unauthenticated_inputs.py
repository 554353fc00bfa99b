"""Low: unauthenticated inputs get a clean 4xx from a real `askwith serve` process, never a 500 with a traceback
(red team: Slack timestamp `abc` / empty / `1e3` / 5,000 digits, a non-ASCII signature, a non-ASCII link signature,
`/asks/99999999999999999999`); `/metrics` is not open to anyone; `inbound_delivery` does not grow forever."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from bot.store import models
from bot.store.db import Database
from bot.store.deliveries import DeliveryLog
from bot.web.tokens import MemberClaim, sign_member_token
from tests.fakes.served_slack import LINK_SECRET, ServedSlack


METRICS_TOKEN = "metrics-token-4d3c2b1a"


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[ServedSlack]:
    async with ServedSlack(tmp_path, log_level="INFO", env={"ASKWITH_METRICS_TOKEN": METRICS_TOKEN}) as served:
        yield served


SIGNATURE = "v0=" + "ab" * 32


MALFORMED = {
    "abc": (b"abc", SIGNATURE.encode()),
    "empty": (b"", SIGNATURE.encode()),
    "1e3": (b"1e3", SIGNATURE.encode()),
    "5000 digits": (b"9" * 5000, SIGNATURE.encode()),
    "non-ASCII": (b"1700000000", "v0=é".encode()),
    "non-ASCII, 64 long": (b"1700000000", ("v0=" + "é" * 32).encode()),
}


async def test_malformed_slack_signature_headers_get_a_clean_4xx(served: ServedSlack) -> None:
    answers = {}
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:
        for name, (timestamp, signature) in MALFORMED.items():
            headers = [(b"x-slack-request-timestamp", timestamp), (b"x-slack-signature", signature)]
            response = await http.post("/slack/events", content=b"command=%2Fask-with&text=hi", headers=headers)
            answers[name] = response.status_code
    assert all(400 <= status < 500 for status in answers.values()), answers
    assert "Traceback" not in served.logs()


async def test_odd_links_ids_and_metrics_get_a_clean_answer(served: ServedSlack) -> None:
    async with httpx.AsyncClient(base_url=served.url, timeout=30, follow_redirects=True) as http:
        assert (await http.get("/asks/1?t=abc.%C3%A9")).status_code == 403
        assert (await http.get("/asks/1?t=%C3%A9.%C3%A9")).status_code == 403
        link = sign_member_token(LINK_SECRET, MemberClaim(1, "alice"), expires_at=time.time() + 600)
        assert (await http.get(f"/conversations?t={link}")).status_code == 200  # signed in: the ids reach the store
        assert (await http.get("/asks/99999999999999999999")).status_code == 404
        assert (await http.get("/negotiations/99999999999999999999")).status_code == 404
        http.cookies.clear()
        assert (await http.get("/metrics")).status_code == 401
        assert (await http.get("/metrics", headers={"Authorization": "Bearer wrong"})).status_code == 401
        scraped = await http.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        assert scraped.status_code == 200 and "askwith_asks_started_total" in scraped.text
    assert "Traceback" not in served.logs()


async def test_old_deliveries_are_pruned_as_new_ones_arrive(sqlite_db: Database) -> None:
    log = DeliveryLog(sqlite_db)
    assert await log.first_time("slack", "command:T1:old")
    async with sqlite_db.session() as session, session.begin():
        row = (await session.execute(select(models.InboundDelivery))).scalar_one()
        row.received_at = datetime.now(UTC) - timedelta(days=2)
    assert await DeliveryLog(sqlite_db).first_time("slack", "command:T1:new")  # a fresh process, say
    async with sqlite_db.session() as session:
        keys = list((await session.execute(select(models.InboundDelivery.key))).scalars())
        assert keys == ["command:T1:new"]
        assert (await session.execute(select(func.count()).select_from(models.InboundDelivery))).scalar_one() == 1
