"""Log hygiene (High 1, Medium 11): a full run of a real `askwith serve` process at ASKWITH_LOG_LEVEL=DEBUG writes
no request body, secret, token, OAuth code or transcript-link token into its logs.

The run: a forged request whose body carries a marker; a signed `/ask-with` that runs and posts an answer with a
transcript link; that link opened (the access log sees the URL); the member install flow (`/slack/install`, Slack's
redirect with a code, the code exchanged for an `xoxp-` token by `oauth.v2.access`). Then every log line is searched.
Red team, before: the client secret, OAuth codes and members' xoxp- tokens were logged at DEBUG, and bolt logged the
body of every bad-signature request.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from bot.base.logs import RedactingFilter
from tests.fakes.asks import QUESTION
from tests.fakes.served_slack import CLIENT_SECRET, LINK_SECRET, SIGNING_SECRET, ServedSlack
from tests.fakes.slack_requests import signed_headers


BODY_MARKER = "bodymarker-7f3e9a"


async def _until(check, timeout_s: float = 60.0):  # noqa: ANN001, ANN202 - a small poll
    deadline = time.monotonic() + timeout_s
    while not (found := check()):
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.1)
    return found


async def test_a_full_run_at_debug_logs_no_body_secret_token_code_or_link(tmp_path: Path) -> None:
    served = ServedSlack(
        tmp_path, log_level="DEBUG", dotenv={"SLACK_CLIENT_ID": "1111.2222", "SLACK_CLIENT_SECRET": CLIENT_SECRET}
    )
    async with served, httpx.AsyncClient(base_url=served.url, timeout=30) as http:
        fake = served.fake
        forged = f"command=%2Fask-with&text={BODY_MARKER}&user_id=UALICE"
        bad = await http.post("/slack/events", content=forged, headers=signed_headers("wrong-secret", forged))
        assert bad.status_code == 401
        body, headers = served.command("UALICE", f"<@UBOB|bob> {QUESTION} {BODY_MARKER}")
        assert (await http.post("/slack/events", content=body, headers=headers)).status_code == 200

        alice_dm = fake.world.dm(fake.world.bot_id, "UALICE").id
        answer = (await _until(lambda: fake.posts(alice_dm)))[0]
        link = re.search(r"https?://\S+/asks/\d+\?t=([^\s>|]+)", answer)
        assert link is not None, answer
        link_token = link[1]
        opened = await http.get(f"/asks/1?t={link_token}")
        assert opened.status_code == 303 and opened.headers["location"] == "/asks/1"  # the token leaves the URL
        escaped = await http.get(f"/asks/1?%74={link_token}")  # the key percent-escaped: the server reads `t=`
        assert escaped.status_code == 303

        install = await http.get("/slack/install")
        state = parse_qs(urlsplit(install.headers["location"]).query)["state"][0]
        code = fake.issue_oauth_code("UALICE")
        redirected = await http.get(f"/slack/oauth_redirect?code={code}&state={state}")
        assert redirected.status_code == 200, redirected.text
    logs = served.logs()
    user_tokens = list(fake.user_tokens)
    assert any(t.startswith("xoxp-") for t in user_tokens)  # the exchange really happened
    assert "DEBUG" in logs and "Sending a request" in logs and "GET /asks/1?t=" in logs  # a real DEBUG run
    forbidden = {
        "request body": BODY_MARKER, "signing secret": SIGNING_SECRET, "link secret": LINK_SECRET,
        "client secret": CLIENT_SECRET, "bot token": fake.bot_token, "encryption key": served.encryption_key,
        "OAuth code": code, "OAuth state": state, "link token": link_token,
        **{f"user token {t[:9]}": t for t in user_tokens},
    }  # fmt: skip
    leaked = [name for name, value in forbidden.items() if value in logs]
    assert not leaked, leaked
    assert not re.search(r"\bx(?:ox[a-z]|app)-(?!\*\*\*)", logs)  # no Slack token of any kind


def test_the_filter_redacts_what_libraries_print() -> None:
    redacting = RedactingFilter(["s3cr3t-value"])

    def out(name: str, message: str, *args: object) -> str:
        record = logging.LogRecord(name, logging.DEBUG, __file__, 1, message, args or None, None)
        redacting.filter(record)
        return record.getMessage()

    refused = out("slack_bolt.AsyncRequestVerification", "Invalid request signature detected (signature: v0=1, "
                  "timestamp: 1, body: text=secret+plans)")  # fmt: skip
    assert refused == "Invalid request signature detected (body omitted)"
    assert "secret plans" not in out("slack_bolt.AsyncApp", "Unhandled request ({'text': 'secret plans'})")
    sent = out("slack_sdk.web.async_base_client", "Sending a request - url: POST https://x/api/chat.postMessage, "
               "params: {}, data: {'text': 'see https://a/asks/1?t=abc.def'}")  # fmt: skip
    assert sent == "Sending a request - url: POST https://x/api/chat.postMessage (body omitted)"
    access = out("uvicorn.access", '%s - "%s %s HTTP/%s" %d', "1.2.3.4", "GET", "/asks/1?t=abc.def&x=1", "1.1", 303)
    assert access == '1.2.3.4 - "GET /asks/1?t=***&x=1 HTTP/1.1" 303'
    assert out("x", "got {'access_token': 'xoxp-1-2', 'code': 'c0de'} s3cr3t-value") == (
        "got {'access_token': '***', 'code': '***'} ***"
    )
    assert out("x", "token xoxb-123-abc and xapp-1-A") == "token xoxb-*** and xapp-***"
    sql = out("aiosqlite", "executing partial(<execute>, 'INSERT INTO ask (question) VALUES (?)', ('secret plans',))")
    assert sql == "executing partial(<execute>, 'INSERT INTO ask (question) VALUES (?) (body omitted)"
    assert len(out("x", "y" * 100_000)) < 5000
