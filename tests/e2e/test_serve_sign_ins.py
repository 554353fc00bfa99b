"""Two real `askwith serve` processes on one PostgreSQL database: a member signed in through one is recognised by the
other and after that one restarts; signing out through the first ends the session on the second at once."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.web.tokens import MemberClaim, sign_member_token
from tests.conftest import _drop_postgres_database, _postgres_database
from tests.e2e.cli_helpers import start_askwith


pytestmark = [pytest.mark.slow, pytest.mark.postgres]

SECRET = "shared-link-secret-of-the-deployment"
COOKIE = "askwith_session"
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """One `askwith serve` process: its own port and data directory, the shared database and secret."""

    def __init__(self, data_dir: Path, database_url: str) -> None:
        self.data_dir, self.database_url = data_dir, database_url
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> Serve:
        self.proc = start_askwith(
            self.data_dir, "serve", ASKWITH_DATABASE_URL=self.database_url, ASKWITH_LINK_SECRET=SECRET,
            ASKWITH_WEB_PORT=str(self.port), ASKWITH_INGEST_INTERVAL_SECONDS="0",
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.communicate()[1][-3000:]
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"askwith serve on port {self.port} did not become healthy")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def conversations(self, cookie: str) -> httpx.Response:
        return httpx.get(f"{self.url}/conversations", cookies={COOKIE: cookie}, follow_redirects=False, timeout=30)


@pytest.fixture
def database_url() -> Iterator[str]:
    url, name = asyncio.run(_postgres_database())
    try:
        yield url
    finally:
        asyncio.run(_drop_postgres_database(name))


def _signed_in(response: httpx.Response) -> bool:
    return response.status_code == 200 and 'id="signed-in-as" data-handle="alice"' in response.text


def test_a_sign_in_crosses_serve_processes_and_restarts_and_sign_out_ends_it_everywhere(
    tmp_path: Path, database_url: str
) -> None:
    first = Serve(tmp_path / "first", database_url)
    second = Serve(tmp_path / "second", database_url)
    try:
        first.start()
        second.start()
        link = sign_member_token(SECRET, MemberClaim(1, "alice"), expires_at=time.time() + 3600)
        opened = httpx.get(f"{first.url}/conversations?t={link}", follow_redirects=False, timeout=30)
        assert opened.status_code == 303, opened.text
        cookie = opened.cookies[COOKIE]
        assert _signed_in(first.conversations(cookie))
        assert _signed_in(second.conversations(cookie))

        second.stop()
        second.start()  # a restart signs no one out
        assert _signed_in(second.conversations(cookie))

        with httpx.Client(base_url=first.url, cookies={COOKIE: cookie}, timeout=30) as browser:
            token = CSRF_FIELD.search(browser.get("/conversations").text)
            assert token is not None
            out = browser.post("/signout", data={"csrf_token": token[1]}, follow_redirects=False)
            assert out.status_code == 303
        # The cookie copied before sign-out: refused by both processes at once, no waiting.
        for serve in (second, first):
            refused = serve.conversations(cookie)
            assert refused.status_code in (303, 401) and not _signed_in(refused)
    finally:
        first.stop()
        second.stop()
