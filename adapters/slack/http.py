"""Slack's HTTP endpoints as one ASGI application, to mount in the long-running process (e.g. under `/slack`).

    POST /slack/events          commands, events, interactivity (signature verified by bolt: 401 when forged/old)
    GET  /slack/install         sends a member to Slack to grant askwith read access to their DMs
    GET  /slack/oauth_redirect  Slack sends the member back here; the user token is stored encrypted

Paths are matched after the mount point (`root_path`), with or without the `/slack` prefix, so the same app works
mounted under `/slack` or served on its own.

An event's body is bounded before anything is read (413 past `max_body_bytes`, by its Content-Length or while it
streams in), and its signature headers are checked here before bolt sees the request: malformed or forged requests
get a clean 400/401, and bolt (which logs the whole body of a request it refuses) never sees them.

Slack wants an acknowledgement within 3 seconds. Bolt handles at most `max_dispatching` requests at a time. A request
that finds them all busy (a burst of commands), or that bolt has not answered within `ack_budget_s` (a rate-limited
Slack API call inside a listener), is acknowledged at once with an empty 200; once bolt's answer is ready it is posted
to the request's `response_url`, where Slack shows it exactly as it would have shown the acknowledgement.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

import aiohttp
from slack_bolt.adapter.asgi.http_request import AsgiHttpRequest
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.slack import texts
from adapters.slack.install import MemberInstallFlow
from bot.base.json_limits import form_too_deep, too_deep
from bot.errors import PlatformInstallError


logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Response = tuple[int, dict[str, str], str]

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
ACK_BUDGET_S = 1.0  # of Slack's 3 seconds; the rest is for a busy process and the network
MAX_DISPATCHING = 4  # more would take the event loop from the acknowledgements of a burst
ANSWERED_INLINE = frozenset({"url_verification", "ssl_check"})  # Slack needs these answers in the response itself
TIMESTAMP = re.compile(r"[0-9]{1,12}")  # Unix seconds, as Slack sends them
SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")
_TEXT = {"content-type": "text/plain; charset=utf-8"}


class BodyTooLarge(Exception):
    """The request body is larger than this endpoint accepts."""


class SlackHttpApp:
    def __init__(
        self,
        app: AsyncApp,
        *,
        install: MemberInstallFlow | None = None,
        events: bool = True,
        signing_secret: str = "",
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        ack_budget_s: float = ACK_BUDGET_S,
        max_dispatching: int = MAX_DISPATCHING,
    ) -> None:
        self.app = app
        self.install = install
        self.events = events  # False in Socket Mode: events come over the socket, and bolt verifies no signature
        self.max_body_bytes = max_body_bytes
        self.ack_budget_s = ack_budget_s
        self._late: set[asyncio.Task[Any]] = set()  # requests acknowledged before bolt answered them
        self.max_dispatching = max_dispatching
        self._slots = asyncio.Semaphore(max_dispatching)
        self._in_flight = 0  # requests given to bolt and not answered yet (counted at once, unlike the semaphore)
        self._webhooks: aiohttp.ClientSession | None = None  # one connection pool for every late answer
        if events and not signing_secret:
            raise ValueError("the events endpoint needs the signing secret")
        self._verifier = SignatureVerifier(signing_secret) if events else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            raise TypeError(f"Unsupported ASGI scope type: {scope['type']!r}")
        request = AsgiHttpRequest(scope, receive)
        route = (scope["method"], _relative_path(scope))
        if route == ("POST", "/events") and self.events:
            status, headers, body = await self._events(scope, receive)
        elif self._installs_workspaces(route, request):
            status, headers, body = await self._workspace_install(route, request)
        elif route == ("GET", "/install") and self.install is not None:
            status, headers, body = 302, {"location": self.install.authorize_url()}, ""
        elif route == ("GET", "/oauth_redirect") and self.install is not None:
            status, headers, body = await _oauth_redirect(self.install, request)
        else:
            status, headers, body = 404, {"content-type": "text/plain; charset=utf-8"}, "Not Found"
        await _respond(send, status, headers, body)

    def _installs_workspaces(self, route: tuple[str, str], request: AsgiHttpRequest) -> bool:
        """Whether bolt's OAuth flow (many workspaces) takes this request: its install link, and every redirect but
        the member install flow's own (told apart by its signed state)."""
        flow = self.app.oauth_flow if self.app is not None else None  # no app: Socket Mode's member flow only
        if flow is None or route not in (("GET", "/install"), ("GET", "/oauth_redirect")):
            return False
        if self.install is None or route[1] == "/install":
            return True
        state = parse_qs(request.query_string).get("state", [""])[0]
        return not self.install.issued(state)

    async def _workspace_install(self, route: tuple[str, str], request: AsgiHttpRequest) -> Response:
        flow = self.app.oauth_flow
        assert flow is not None
        bolt_request = AsyncBoltRequest(body="", query=request.query_string, headers=request.get_headers())
        if route[1] == "/install":
            response = await flow.handle_installation(bolt_request)
        else:
            response = await flow.handle_callback(bolt_request)
        return response.status, response.first_headers(), response.body

    async def _events(self, scope: Scope, receive: Receive) -> Response:
        request = AsgiHttpRequest(scope, receive)
        headers = request.get_headers()
        try:
            raw = await read_body(scope, receive, self.max_body_bytes)
        except BodyTooLarge:
            return 413, _TEXT, "Request body too large"
        refused = self._refuse_unsigned(headers, raw)
        if refused is not None:
            return refused
        text = raw.decode("utf-8", "replace")
        if too_deep(text) or form_too_deep(text):  # bolt's JSON parsing would recurse without bound
            return 400, _TEXT, "Request body nested too deeply"
        bolt_request = AsyncBoltRequest(body=text, query=request.query_string, headers=headers)
        body = bolt_request.body if isinstance(bolt_request.body, dict) else {}
        inline = body.get("type") in ANSWERED_INLINE or "ssl_check" in body
        busy = self._in_flight >= self.max_dispatching and not inline
        self._in_flight += 1
        work = asyncio.ensure_future(self._dispatch(bolt_request))
        if not busy:
            done, _ = await asyncio.wait({work}, timeout=None if inline else self.ack_budget_s)
            if work in done:
                response = work.result()
                return response.status, response.first_headers_without_set_cookie(), response.body
        response_url = body.get("response_url")
        self._track(asyncio.ensure_future(self._answer_late(work, response_url)))
        return 200, _TEXT, ""

    async def _dispatch(self, request: AsyncBoltRequest) -> BoltResponse:
        try:
            async with self._slots:
                return await self.app.async_dispatch(request)
        finally:
            self._in_flight -= 1

    def _track(self, task: asyncio.Task[Any]) -> None:
        self._late.add(task)
        task.add_done_callback(self._late.discard)

    async def drain(self) -> None:
        """Wait for requests acknowledged early to finish (shutdown, tests)."""
        while self._late:
            await asyncio.gather(*list(self._late), return_exceptions=True)
        if self._webhooks is not None:
            await self._webhooks.close()
            self._webhooks = None

    async def _answer_late(self, work: asyncio.Future[BoltResponse], response_url: str | None) -> None:
        """Bolt's answer to a request acknowledged early, posted where Slack shows it (commands and clicks carry a
        `response_url`; events need no answer)."""
        response = await work
        try:
            message = json.loads(response.body) if response.status == 200 and response.body else None
        except ValueError:
            message = {"text": response.body, "response_type": "ephemeral"}
        if not response_url or not isinstance(message, dict) or not (message.get("text") or message.get("blocks")):
            return
        if self._webhooks is None:
            self._webhooks = aiohttp.ClientSession()
        try:
            await AsyncWebhookClient(response_url, session=self._webhooks).send_dict(message)
        except Exception as exc:  # noqa: BLE001 - network trouble: the member misses one notice, the work is done
            logger.warning("could not post a late answer to Slack's response_url: %s", type(exc).__name__)

    def _refuse_unsigned(self, headers: dict[str, Any], raw: bytes) -> Response | None:
        """400 for malformed signature headers or body, 401 for a wrong or stale signature; None when it is good."""
        timestamp = _first(headers, "x-slack-request-timestamp")
        signature = _first(headers, "x-slack-signature")
        if not TIMESTAMP.fullmatch(timestamp) or not SIGNATURE.fullmatch(signature):
            logger.info("refused a Slack request with malformed signature headers (%d bytes)", len(raw))
            return 400, _TEXT, "Malformed Slack signature headers"
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return 400, _TEXT, "Request body is not UTF-8"
        if self._verifier is not None and not self._verifier.is_valid(raw, timestamp, signature):
            logger.info("refused a Slack request with a wrong or stale signature (%d bytes)", len(raw))
            return 401, _TEXT, "Invalid request signature"
        return None


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole request body, refusing (BodyTooLarge) past `limit` bytes: by the declared Content-Length before
    reading anything, or as soon as the received chunks exceed it (chunked uploads declare none)."""
    declared = dict(scope.get("headers") or []).get(b"content-length", b"")
    if declared and (not declared.isdigit() or len(declared) > 15 or int(declared) > limit):
        raise BodyTooLarge()
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _first(headers: dict[str, Any], name: str) -> str:
    value = headers.get(name) or ""
    return value if isinstance(value, str) else next(iter(value), "")


async def _oauth_redirect(install: MemberInstallFlow, request: AsgiHttpRequest) -> tuple[int, dict[str, str], str]:
    query = {k: v[0] for k, v in parse_qs(request.query_string).items()}
    try:
        if "error" in query:
            raise PlatformInstallError(f"Slack said {query['error']}")
        grant = await install.complete(query.get("code", ""), query.get("state", ""))
    except PlatformInstallError as exc:
        return 400, _HTML, _page(texts.install_failed(str(exc)))
    return 200, _HTML, _page(texts.install_done(grant.member_platform_id))


_HTML = {"content-type": "text/html; charset=utf-8"}


def _page(text: str) -> str:
    return f"<!doctype html><meta charset=utf-8><title>askwith</title><p>{html.escape(text)}</p>"


def _relative_path(scope: Scope) -> str:
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.removeprefix("/slack") or "/"


async def _respond(send: Send, status: int, headers: dict[str, str], body: str) -> None:
    raw = body.encode()
    header_list = [(k.lower().encode(), v.encode()) for k, v in headers.items() if k.lower() != "content-length"]
    header_list.append((b"content-length", str(len(raw)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": header_list})
    await send({"type": "http.response.body", "body": raw, "more_body": False})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
