"""Third-party loggers go through askwith's redaction at DEBUG, whatever handlers they set up themselves.

Red team, before: `slack_bolt.oauth.async_callback_options` logged a workspace install's OAuth `code` and `state` at
DEBUG (it prints the callback's parsed query, `{'code': ['...'], 'state': ['...']}`, which the redaction missed), and
a transcript-link token written as `?%74=` (the server reads `?t=`) was logged in clear by the access log.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import time
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from bot.base.logs import RedactingFilter, configure_logging
from bot.settings import Settings
from bot.store.user_tokens import TokenCipher
from bot.store.world import World
from bot.web.tokens import MemberClaim, sign_member_token
from tests.conftest import SAMPLE_WORKSPACE
from tests.fakes.slack_api import FakeSlackApi
from tests.fakes.slack_cloud import FakeSlackCloud
from tests.fakes.slack_requests import command_body, signed_headers
from tests.fakes.slack_shapes import slack_world
from tests.integration.slack.conftest import SIGNING_SECRET
from tests.integration.test_serve_platforms import Served


LINK_SECRET = "library-log-link-secret-5e6f"
BOLT_OAUTH = "slack_bolt.oauth.async_callback_options"


@pytest.fixture
async def cloud() -> AsyncIterator[FakeSlackCloud]:
    world = dataclasses.replace(slack_world(World.load(SAMPLE_WORKSPACE)), id="TLOGGED")
    fake = FakeSlackCloud([FakeSlackApi(world, bot_token="xoxb-logged")])
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
def written() -> Iterator[io.StringIO]:
    """What the process's root handler writes, with libraries set up as they set themselves up: bolt and uvicorn's
    access log with handlers of their own (uvicorn's default config, discord.py's `setup_logging` do so)."""
    out = io.StringIO()
    root = logging.getLogger()
    handler = logging.StreamHandler(out)
    own = {name: logging.StreamHandler(out) for name in ("slack_bolt", "uvicorn.access")}
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)  # what configure_logging's basicConfig does in a process with no handler yet
    for name, library in own.items():
        logging.getLogger(name).addHandler(library)
        logging.getLogger(name).propagate = name != "uvicorn.access"
    try:
        yield out
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        for name, library in own.items():
            logging.getLogger(name).removeHandler(library)
        for h in root.handlers:
            for f in [f for f in h.filters if isinstance(f, RedactingFilter)]:
                h.removeFilter(f)


async def test_an_oauth_install_a_sign_in_link_and_a_command_at_debug_log_no_code_state_or_token(
    settings: Settings, cloud: FakeSlackCloud, written: io.StringIO
) -> None:
    fake = cloud.workspaces[0]
    settings = settings.replace(
        slack_distribution="oauth", slack_signing_secret=SIGNING_SECRET, slack_client_id=fake.client_id,
        slack_client_secret=fake.client_secret, slack_api_url=cloud.base_url,
        token_encryption_key=TokenCipher.new_key(), ingest_interval_seconds=0, link_secret=LINK_SECRET,
        public_url="https://askwith.example", log_level="DEBUG",
    )  # fmt: skip
    link_token = sign_member_token(LINK_SECRET, MemberClaim(1, "UALICE"), expires_at=time.time() + 600)
    async with Served(settings) as served, httpx.AsyncClient(base_url=served.url, timeout=10) as http:
        configure_logging(settings)  # as `askwith serve` does, once uvicorn has set up its loggers
        logging.getLogger("uvicorn.access").setLevel(logging.DEBUG)
        install = await http.get("/slack/install")
        state = parse_qs(urlparse(install.headers["location"]).query)["state"][0]
        code = fake.issue_install_code("UALICE")
        cookie = {"cookie": install.headers["set-cookie"].split(";")[0]}
        redirect = await http.get("/slack/oauth_redirect", params={"code": code, "state": state}, headers=cookie)
        assert redirect.status_code == 200, redirect.text
        body = command_body("TLOGGED", "UALICE", "/askwith", "on", response_url=fake.hooks_url + "c/1")
        response = await http.post("/slack/events", content=body, headers=signed_headers(SIGNING_SECRET, body))
        assert response.status_code == 200
        opened = await http.get(f"/asks/1?%74={link_token}")
        assert opened.status_code < 500
    logs = written.getvalue()
    assert "Handling an OAuth callback success" in logs, "bolt's DEBUG line was written (a real DEBUG run)"
    assert "GET /asks/1?t=***" in logs, "the access log line was written, its key decoded"
    leaked = [
        name for name, value in {"code": code, "state": state, "link token": link_token}.items() if value in logs
    ]
    assert not leaked, [line for line in logs.splitlines() if state in line][:3]


@pytest.mark.parametrize(
    ("name", "line", "secret"),
    [
        (BOLT_OAUTH, "OAuth callback (request: {'code': ['c0de-1'], 'state': ['st4te']})", "c0de-1"),
        (BOLT_OAUTH, "OAuth callback (request: {'code': ['c0de-1'], 'state': ['st4te']})", "st4te"),
        ("uvicorn.access", '1.2.3.4 - "GET /asks/1?%74=tok.en1 HTTP/1.1" 303', "tok.en1"),
        ("uvicorn.access", '1.2.3.4 - "GET /asks/1?x=1&%2574=tok.en2 HTTP/1.1" 303', "tok.en2"),
        ("uvicorn.access", '1.2.3.4 - "GET /slack/oauth_redirect?%63ode=c0de-2&st%61te=s2 HTTP/1.1" 200', "c0de-2"),
        ("httpcore.http11", "receive_response_headers.complete return_value=(b'HTTP/1.1', 302, [(b'set-cookie', "
         "b'slack-app-oauth-state=st4te')])", "st4te"),
    ],
)  # fmt: skip
def test_the_filter_decodes_query_keys_and_reads_printed_queries(name: str, line: str, secret: str) -> None:
    record = logging.LogRecord(name, logging.DEBUG, __file__, 1, line, None, None)
    RedactingFilter().filter(record)
    assert secret not in record.getMessage()
