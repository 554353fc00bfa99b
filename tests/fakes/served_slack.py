"""A real `askwith serve --scripted` process hosting Slack against the fake Slack Web API, for security tests and the
acknowledgement benchmark.

    async with ServedSlack(tmp_path, log_level="DEBUG") as served:
        response = await http.post(served.url + "/slack/events", ...)
        served.fake.posts(channel)       # what the process posted to "Slack"
    served.logs()                        # everything the process wrote (stdout + stderr), after it stopped
    await served.kill(); await served.restart()   # SIGKILL, then a new process on the same database
    ServedSlack(tmp_path, database_url=url, workers=("worker-a",))   # with `askwith worker --scripted` beside it

The fake runs on its own event loop in a thread, so a test may block while the process calls it. Before the process
starts, the workspace is mirrored and ingested (Bob granted his DMs; Alice, Bob and Erin opted in), as an operator's
first `askwith ingest` would; the process then mirrors it again at start-up.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from adapters.slack.client import web_client
from adapters.slack.port import SlackPort
from bot.platform.port import SharePolicy
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettingsStore
from bot.store.user_tokens import TokenCipher, UserTokenGrant, UserTokenStore
from memory_ingest.worker import IngestWorker
from tests.fakes.asks import two_fact_world
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_requests import block_actions_body, command_body, event_body, signed_headers
from tests.fakes.slack_shapes import slack_world


ROOT = Path(__file__).parents[2]
SIGNING_SECRET = "4e1f9c2ab7d35e60f1a2b3c4d5e6f708"
LINK_SECRET = "served-link-secret-5a6b7c8d9e0f"
CLIENT_SECRET = "served-client-secret-0f9e8d7c6b5a"
T = TypeVar("T")


class ThreadedFakeSlack:
    """`FakeSlackApi` on an event loop of its own thread."""

    def __init__(self) -> None:
        self.api = FakeSlackApi(slack_world(two_fact_world()), client_secret=CLIENT_SECRET)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="fake-slack", daemon=True)

    def call(self, work: Callable[[], Awaitable[T]] | Any) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(30)

    def start(self) -> None:
        self.thread.start()
        self.call(self.api.start())

    def stop(self) -> None:
        self.call(self.api.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


async def _stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM (the process drains), SIGKILL if it has not exited within a minute."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.to_thread(proc.wait, 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        await asyncio.to_thread(proc.wait, 10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServedSlack:
    def __init__(
        self,
        workdir: Path,
        *,
        log_level: str = "WARNING",
        env: dict[str, str] | None = None,
        dotenv: dict[str, str] | None = None,
        asks_before_sharing: tuple[str, ...] = (),
        database_url: str = "",
        workers: tuple[str, ...] = (),
    ) -> None:
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.slack = ThreadedFakeSlack()
        self.fake = self.slack.api
        self.encryption_key = TokenCipher.new_key()
        self.log_level = log_level
        self.extra_env = env or {}
        self.dotenv = dotenv or {}
        self.asks_before_sharing = asks_before_sharing  # members whose share policy is `ask`
        self.database_url = database_url  # empty: SQLite in the data directory
        self.worker_names = workers  # started with the process (several need PostgreSQL: `database_url`)
        self.workers: dict[str, subprocess.Popen[str]] = {}
        self.proc: subprocess.Popen[str] | None = None
        self.out_path = workdir / "serve-out.txt"
        self.err_path = workdir / "serve-err.txt"
        self._dm_ts: dict[str, str] = {}  # event id -> the ts of its message (a redelivery carries the same)

    # ------------------------------------------------------------------ settings and preparation
    def settings(self) -> Settings:
        return Settings(
            data_dir=self.workdir / "data",
            database_url=self.database_url,
            embedder="hash",
            slack_bot_token=self.fake.bot_token,
            slack_signing_secret=SIGNING_SECRET,
            slack_api_url=self.fake.base_url,
            token_encryption_key=self.encryption_key,
            link_secret=LINK_SECRET,
        )

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ASKWITH_", "SLACK_", "DISCORD_"))}
        env.update(
            PYTHONPATH=str(ROOT), ASKWITH_DATA_DIR=str(self.workdir / "data"), ASKWITH_EMBEDDER="hash",
            ASKWITH_LOG_LEVEL=self.log_level, ASKWITH_LINK_SECRET=LINK_SECRET, ASKWITH_WEB_PORT=str(self.port),
            ASKWITH_INGEST_INTERVAL_SECONDS="0", ASKWITH_TOKEN_ENCRYPTION_KEY=self.encryption_key,
            SLACK_BOT_TOKEN=self.fake.bot_token, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_API_URL=self.fake.base_url,
            ASKWITH_DATABASE_URL=self.database_url,
        )  # fmt: skip
        env.update(self.extra_env)
        return env

    async def prepare(self) -> None:
        settings = self.settings()
        db = await Database.open(settings)
        try:
            tokens = UserTokenStore(db, TokenCipher.from_settings(settings))
            team = self.fake.world.id
            await tokens.save(UserTokenGrant("slack", team, "UBOB", self.fake.grant_user_token("UBOB"), ()))
            ingest = IngestWorker(SlackPort(web_client(settings), user_tokens=tokens), db)
            await ingest.mirror()
            for member in ("UALICE", "UBOB", "UERIN"):
                await MemberSettingsStore(db).set_opted_in(WorkspaceKey("slack", team), member, True)
            for member in self.asks_before_sharing:
                await MemberSettingsStore(db).set_share_policy(WorkspaceKey("slack", team), member, SharePolicy.ASK)
            await ingest.run()
        finally:
            await db.close()

    async def unfinished_asks(self) -> int:
        from sqlalchemy import func, select

        from bot.asks import models

        db = await Database.open(self.settings(), migrate=False)
        try:
            async with db.session() as session:
                stmt = select(func.count()).where(models.Ask.status.in_(("queued", "running")))
                return int((await session.execute(stmt)).scalar_one())
        finally:
            await db.close()

    # ------------------------------------------------------------------ the process
    async def __aenter__(self) -> ServedSlack:
        self.slack.start()
        try:
            await self.prepare()
            if self.dotenv:
                lines = [f"{k}={v}" for k, v in self.dotenv.items()]
                (self.workdir / ".env").write_text("\n".join(lines) + "\n")
            for name in self.worker_names:  # starting while `serve` starts: the database is migrated already
                self.start_worker(name)
            await self._start_process()
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def _start_process(self) -> None:
        with self.out_path.open("a") as out, self.err_path.open("a") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bot", "serve", "--scripted"], cwd=self.workdir, env=self.env(),
                stdout=out, stderr=err, text=True,
            )  # fmt: skip
        await self._wait_healthy()

    def start_worker(self, name: str) -> subprocess.Popen[str]:
        """An `askwith worker --scripted` on the same database and settings, with a data directory of its own (as on
        another machine); its output goes to `<name>-out.txt` / `<name>-err.txt` (`worker_logs`)."""
        env = {**self.env(), "ASKWITH_DATA_DIR": str(self.workdir / f"{name}-data")}
        with (self.workdir / f"{name}-out.txt").open("w") as out, (self.workdir / f"{name}-err.txt").open("w") as err:
            self.workers[name] = subprocess.Popen(
                [sys.executable, "-m", "bot", "worker", "--scripted"], cwd=self.workdir, env=env,
                stdout=out, stderr=err, text=True,
            )  # fmt: skip
        return self.workers[name]

    def worker_logs(self, name: str) -> str:
        return "".join(p.read_text() for p in (self.workdir / f"{name}-out.txt", self.workdir / f"{name}-err.txt"))

    async def kill(self) -> None:
        """SIGKILL the process, as a crashed host or an OOM kill would: no shutdown runs."""
        assert self.proc is not None
        self.proc.kill()
        await asyncio.to_thread(self.proc.wait, 10)

    async def restart(self) -> None:
        """A new `askwith serve` on the same database, data directory, address and fake Slack."""
        await self._start_process()

    async def _wait_healthy(self, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        async with httpx.AsyncClient(timeout=5) as http:
            while time.monotonic() < deadline:
                assert self.proc is not None
                if self.proc.poll() is not None:
                    raise RuntimeError(f"askwith serve exited: {self.logs()[-3000:]}")
                try:
                    if (await http.get(f"{self.url}/healthz")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError("askwith serve did not answer /healthz in time")

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(_stop(p) for p in [*self.workers.values(), self.proc] if p is not None))
        self.slack.stop()

    def logs(self) -> str:
        out = self.out_path.read_text() if self.out_path.exists() else ""
        err = self.err_path.read_text() if self.err_path.exists() else ""
        return out + err

    def rss_kib(self) -> int:
        """The serving process's resident memory now (Linux)."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    # ------------------------------------------------------------------ what Slack sends
    def dm_event(self, user: str, text: str, *, retry: int | None = None, event_id: str) -> tuple[str, dict[str, str]]:
        """`user` writes `text` to the bot in their DM; Slack's delivery `retry` of event `event_id`."""
        channel = self.fake.world.dm(self.fake.world.bot_id, user).id

        async def said() -> str:  # on the fake's own loop, which serves the process meanwhile
            return self.fake.timeline.add(channel, user, text, None)

        ts = self._dm_ts[event_id] if event_id in self._dm_ts else self.slack.call(said())
        self._dm_ts[event_id] = ts
        event = {"type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts, "channel": channel}
        body = event_body(self.fake.world.id, event, event_id=event_id)
        return body, {**signed_headers(SIGNING_SECRET, body, retry=retry), "content-type": "application/json"}

    def command(self, user: str, text: str, *, command: str = "/ask-with") -> tuple[str, dict[str, str]]:
        body = command_body(self.fake.world.id, user, command, text, response_url=self.fake.hooks_url + "c/1")
        return body, signed_headers(SIGNING_SECRET, body)

    def click(self, user: str, action_id: str, value: str) -> tuple[str, dict[str, str]]:
        channel = self.fake.world.dm(self.fake.world.bot_id, user).id
        url = self.fake.hooks_url + "actions/1"
        body = block_actions_body(self.fake.world.id, user, channel, action_id, value, response_url=url)
        return body, signed_headers(SIGNING_SECRET, body)

    def approval_ids(self, member: str) -> list[str]:
        """The approval ids of the Approve / Deny prompts posted to `member`'s DM so far."""
        dm = self.fake.world.dm(self.fake.world.bot_id, member).id
        found = []
        for (channel, _ts), blocks in list(self.fake.blocks.items()):
            buttons = blocks[-1].get("elements", []) if channel == dm and blocks else []
            found.extend(b["value"] for b in buttons[:1] if "value" in b)
        return found
