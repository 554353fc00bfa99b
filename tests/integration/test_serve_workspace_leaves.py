"""`askwith serve` when a Slack workspace leaves (`app_uninstalled`): its scheduled ingestion job and its ask worker
stop at once, and nothing of it is left in the database, while the process keeps serving."""

from __future__ import annotations

import asyncio
import time

import httpx

from bot.asks.forget import count_workspace_rows
from bot.serve.runtime import running
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.member_settings import MemberSettingsStore
from memory_ingest.jobs.ingest_history import JOB_ID_PREFIX
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_requests import event_body, signed_headers
from tests.integration import test_serve_platforms as serve_platforms
from tests.integration.test_serve_platforms import _slack_settings, _until
from tests.web.harness import clear_only, scripted_llm


fake_slack = serve_platforms.fake_slack  # the fixture


async def test_an_uninstalled_workspace_stops_its_jobs_and_worker_and_keeps_nothing(
    settings: Settings, fake_slack: FakeSlackApi
) -> None:
    settings = _slack_settings(settings, fake_slack).replace(ingest_interval_seconds=300)
    async with running(settings, secret="leaves", llm=scripted_llm(settings), memory=clear_only) as runtime:
        (slack,) = [p for p in runtime.platforms if p.name == "slack"]
        assert runtime.scheduler is not None and runtime.scheduler.get_job(f"{JOB_ID_PREFIX}slack") is not None
        worker = runtime.worker_of["slack"]
        assert slack.ingest is not None and slack.asks is not None
        await _until(lambda: slack.ingest.workspace_id is not None)
        workspace_id = slack.asks.workspace_id
        for member in ("UALICE", "UBOB"):
            await MemberSettingsStore(runtime.db).set_opted_in(
                WorkspaceKey("slack", fake_slack.world.id), member, True
            )
        await slack.ingest.run()
        key = ("slack", fake_slack.world.id)
        assert (await count_workspace_rows(runtime.db, workspace_id, key))["message"] > 0
        body = event_body(fake_slack.world.id, {"type": "app_uninstalled"})
        transport = httpx.ASGITransport(app=slack.asgi)
        async with httpx.AsyncClient(transport=transport, base_url="http://askwith.test") as http:
            response = await http.post(
                "/events", content=body, headers=signed_headers(settings.slack_signing_secret, body)
            )
        assert response.status_code == 200
        await _until(lambda: worker.done())
        assert runtime.scheduler.get_job(f"{JOB_ID_PREFIX}slack") is None
        assert "slack" not in runtime.worker_of and "slack" not in runtime.ingest
        assert slack not in runtime.platforms
        deadline = time.monotonic() + 20
        while any((counts := await count_workspace_rows(runtime.db, workspace_id, key)).values()):
            assert time.monotonic() < deadline, counts
            await asyncio.sleep(0.05)
