"""`askwith serve` hosting Slack and Discord (fake APIs), and `askwith worker` running Slack asks from the database.

The served app runs under uvicorn on a real socket, so a signed Slack command goes through the endpoint mounted at
/slack exactly as Slack would send it; Discord's real client logs in against the fake Discord API.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
import uvicorn

from adapters.slack import texts
from adapters.slack.client import web_client
from adapters.slack.http import SlackHttpApp
from adapters.slack.port import SlackPort
from bot.asks import models
from bot.asks.service import AskRequest, AskService
from bot.errors import PlatformStartError
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.serve.process import serve_app
from bot.serve.runtime import running
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.user_tokens import TokenCipher, UserTokenGrant, UserTokenStore
from bot.texts import transcript_texts
from memory_ingest.worker import IngestWorker
from tests.fakes.asks import QUESTION, two_fact_world
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_requests import command_body, signed_headers
from tests.fakes.slack_shapes import slack_world
from tests.integration.discord.conftest import GUILD_ID, discord_world
from tests.web.harness import clear_only, scripted_llm


ROOT = Path(__file__).parents[2]
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
LINK_SECRET = "serve-link-secret-not-for-logs"


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlackApi]:
    api = FakeSlackApi(slack_world(two_fact_world()))
    await api.start()
    try:
        yield api
    finally:
        await api.stop()


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscordApi]:
    world = discord_world()
    api = FakeDiscordApi(world, guild_id=GUILD_ID, owner_id=world.member_by_name("olga").id)
    await api.start()
    try:
        yield api
    finally:
        await api.stop()


def _slack_settings(settings: Settings, fake: FakeSlackApi) -> Settings:
    return settings.replace(
        slack_bot_token=fake.bot_token,
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=fake.base_url,
        link_secret=LINK_SECRET,
        public_url="https://askwith.example",
        ingest_interval_seconds=0,
        worker_heartbeat_seconds=0.5,
    )


async def _until(check: Callable[[], object], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


class Served:
    """`serve_app` under uvicorn on a free local port, inside the test's event loop."""

    def __init__(self, settings: Settings) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        app = serve_app(settings, llm=scripted_llm(settings), memory=clear_only)
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Served:
        self.task = asyncio.create_task(self.server.serve(sockets=[self.sock]))
        await _until(lambda: self.server.started or self.task.done())  # type: ignore[union-attr]
        assert self.server.started, "the app did not start"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.should_exit = True
        await asyncio.wait_for(self.task, 30)  # type: ignore[arg-type]
        self.sock.close()


async def _opt_in(settings: Settings, team: str, *members: str) -> None:
    db = await Database.open(settings, migrate=False)
    try:
        for member in members:
            await MemberSettingsStore(db).set_opted_in(WorkspaceKey("slack", team), member, True)
    finally:
        await db.close()


async def test_serve_hosts_slack_at_slash_slack_and_a_signed_command_reaches_the_core(
    settings: Settings, fake_slack: FakeSlackApi
) -> None:
    settings = _slack_settings(settings, fake_slack)
    world = fake_slack.world
    async with Served(settings) as served, httpx.AsyncClient(base_url=served.url, timeout=10) as http:
        assert (await http.get("/healthz")).json()["platforms"] == ["slack"]
        await _opt_in(settings, world.id, "UALICE", "UBOB")
        body = command_body(world.id, "UALICE", "/ask-with", f"<@UBOB|bob> {QUESTION}")
        forged = await http.post("/slack/events", content=body, headers=signed_headers("not-the-secret", body))
        assert forged.status_code == 401
        response = await http.post("/slack/events", content=body, headers=signed_headers(SIGNING_SECRET, body))
        assert response.status_code == 200 and response.json()["text"] == texts.asking(["<@UBOB>"])

        alice_dm = world.dm(world.bot_id, "UALICE").id
        await _until(lambda: fake_slack.posts(alice_dm))
        answer = fake_slack.posts(alice_dm)
        assert len(answer) == 1 and transcript_texts.transcript_ref(1) in answer[0]
        assert "https://askwith.example/asks/1?t=" in answer[0]  # a signed link from the process's link secret
    assert served.task is not None and served.task.exception() is None


async def test_serve_runs_slack_and_discord_together_and_stops_both(
    settings: Settings, fake_slack: FakeSlackApi, fake_discord: FakeDiscordApi
) -> None:
    settings = _slack_settings(settings, fake_slack).replace(discord_bot_token=fake_discord.bot_token)
    async with Served(settings) as served, httpx.AsyncClient(base_url=served.url, timeout=10) as http:
        assert (await http.get("/healthz")).json()["platforms"] == ["slack", "discord"]
        logged_in = [c for c in fake_discord.calls if c.method == "GET" and c.path.endswith("/users/@me")]
        synced = [c for c in fake_discord.calls if c.method == "PUT" and "/commands" in c.path]
        assert logged_in and synced
    assert served.task is not None and served.task.exception() is None


async def test_a_platform_that_cannot_start_is_one_clear_line(settings: Settings, fake_slack: FakeSlackApi) -> None:
    settings = _slack_settings(settings, fake_slack).replace(slack_bot_token="xoxb-revoked")
    with pytest.raises(PlatformStartError) as info:
        async with running(settings, secret=LINK_SECRET, llm=scripted_llm(settings), memory=clear_only):
            pass
    message = str(info.value)
    assert message.startswith("Slack did not start: ") and "\n" not in message and "xoxb" not in message


# ---------------------------------------------------------------------- askwith worker
async def _submit(settings: Settings, db: Database, fake: FakeSlackApi) -> int:
    """Ingest the Slack workspace (Bob granted his DMs), opt Alice and Bob in, and queue Alice's ask, as the serving
    process would."""
    tokens = UserTokenStore(db, TokenCipher.from_settings(settings))
    await tokens.save(UserTokenGrant("slack", fake.world.id, "UBOB", fake.grant_user_token("UBOB"), ()))
    port = SlackPort(web_client(settings), user_tokens=tokens)
    ingest = IngestWorker(port, db)
    await ingest.mirror()
    await _opt_in(settings, fake.world.id, "UALICE", "UBOB")  # only opted-in members' messages become memory
    mirror = await ingest.run()
    service = AskService(
        settings=settings, db=db, port=port, llm=scripted_llm(settings), memory=MemoryAccess(ClearMemory(db), None),
        workspace_id=mirror.workspace_id,
    )  # fmt: skip
    return await service.submit(AskRequest("UALICE", ["UBOB"], QUESTION))


def _worker_env(settings: Settings, fake: FakeSlackApi) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASKWITH_", "SLACK_", "DISCORD_"))}
    env.update(
        PYTHONPATH=str(ROOT), ASKWITH_DATA_DIR=str(settings.data_dir), ASKWITH_EMBEDDER="hash",
        ASKWITH_LOG_LEVEL="DEBUG", ASKWITH_LINK_SECRET=LINK_SECRET, ASKWITH_WORKER_HEARTBEAT_SECONDS="0.5",
        SLACK_BOT_TOKEN=fake.bot_token, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=fake.base_url,
    )  # fmt: skip
    return env


async def _worker_until(done: Callable[[], bool], env: dict[str, str], logs: Path) -> tuple[bool, int, str, str]:
    """Run `askwith worker --scripted` until `done()`, then SIGTERM it: (was it still running, exit code, out, err).
    Output goes to files: a DEBUG log would fill a pipe and stall the worker."""
    with (logs / "out.txt").open("w") as out, (logs / "err.txt").open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "worker", "--scripted"], cwd=logs, env=env, stdout=out, stderr=err, text=True
        )
        try:
            deadline = time.monotonic() + 30
            while not done() and proc.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            was_running = proc.poll() is None
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(proc.wait, 30)
        finally:
            if proc.poll() is None:
                proc.kill()
    return was_running, code, (logs / "out.txt").read_text(), (logs / "err.txt").read_text()


async def test_askwith_worker_runs_a_queued_slack_ask_and_stops_on_sigterm(
    settings: Settings, fake_slack: FakeSlackApi, tmp_path: Path
) -> None:
    settings = _slack_settings(settings, fake_slack).replace(token_encryption_key=TokenCipher.new_key())
    alice_dm = fake_slack.world.dm(fake_slack.world.bot_id, "UALICE").id
    db = await Database.open(settings)
    try:
        ask_id = await _submit(settings, db, fake_slack)
        listings = len(fake_slack.calls_to("users.list"))
        env = _worker_env(settings, fake_slack)
        was_running, code, out, err = await _worker_until(lambda: bool(fake_slack.posts(alice_dm)), env, tmp_path)
        async with db.session() as session:
            ask = await session.get(models.Ask, ask_id)
    finally:
        await db.close()
    assert was_running and code == 0, err[-3000:]
    assert "Ask worker running for slack" in out
    assert len(fake_slack.calls_to("users.list")) == listings, "a worker runs asks: it does not list the workspace"
    assert ask is not None and (ask.status, ask.final_post) == ("done", "posted"), ask.failure
    answer = fake_slack.posts(alice_dm)
    assert len(answer) == 1 and "Bluebird" in answer[0] and "14 March" in answer[0]
    assert "Traceback" not in err
    for secret in (fake_slack.bot_token, SIGNING_SECRET, LINK_SECRET):  # even at DEBUG, with real API calls
        assert secret not in out and secret not in err


async def test_a_serve_that_leaves_asks_to_workers_runs_none_and_a_worker_runs_its_ask(
    settings: Settings, fake_slack: FakeSlackApi
) -> None:
    settings = _slack_settings(settings, fake_slack).replace(serve_runs_asks=False)
    world, llm = fake_slack.world, scripted_llm(settings)
    alice_dm = world.dm(world.bot_id, "UALICE").id
    async with running(settings, secret=LINK_SECRET, llm=llm, memory=clear_only) as serving:
        assert (serving.runs_asks, serving.worker_of, serving.ask_workers) == (False, {}, [])
    async with Served(settings) as served, httpx.AsyncClient(base_url=served.url, timeout=10) as http:
        await _opt_in(settings, world.id, "UALICE", "UBOB")
        body = command_body(world.id, "UALICE", "/ask-with", f"<@UBOB|bob> {QUESTION}")
        response = await http.post("/slack/events", content=body, headers=signed_headers(SIGNING_SECRET, body))
        assert response.status_code == 200 and response.json()["text"] == texts.asking(["<@UBOB>"])
        # `askwith worker` reads the same settings: the setting is for `serve` alone, a worker runs asks.
        async with running(settings, secret=LINK_SECRET, llm=llm, memory=clear_only, serving=False) as worker:
            assert list(worker.worker_of) == ["slack"]
            (slack,) = worker.platforms
            assert slack.asks is not None
            deadline = time.monotonic() + 20
            while (ask := await slack.asks.load(1)).final_post != "posted":
                assert time.monotonic() < deadline, (ask.status, ask.claimed_by)
                await asyncio.sleep(0.05)
    # Run (to its end: nothing was ingested, so it finds nothing) by the worker alone: serve's own ask worker, or
    # serve running the command's ask itself, would have claimed it first (serve took it before the worker started).
    assert (ask.claimed_by, ask.attempts) == (slack.asks.worker_id, 1)
    assert len(fake_slack.posts(alice_dm)) == 1


async def test_in_socket_mode_the_mounted_endpoint_takes_no_events() -> None:
    """Bolt checks no signature in Socket Mode, so the HTTP endpoint (kept for the install flow) refuses events."""
    endpoint = SlackHttpApp(None, events=False)  # type: ignore[arg-type] - never reached for events
    transport = httpx.ASGITransport(app=endpoint)
    async with httpx.AsyncClient(transport=transport, base_url="http://askwith") as http:
        assert (await http.post("/slack/events", content="command=%2Fask-with")).status_code == 404
