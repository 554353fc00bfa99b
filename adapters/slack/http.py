"""Slack's HTTP endpoints as one ASGI application, to mount in the long-running process (e.g. under `/slack`).

    POST /slack/events          commands, events, interactivity (signature verified by bolt: 401 when forged/old)
    GET  /slack/install         sends a member to Slack to grant askwith read access to their DMs
    GET  /slack/oauth_redirect  Slack sends the member back here; the user token is stored encrypted

Paths are matched after the mount point (`root_path`), with or without the `/slack` prefix, so the same app works
mounted under `/slack` or served on its own.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from slack_bolt.adapter.asgi.http_request import AsgiHttpRequest
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest

from adapters.slack import texts
from adapters.slack.install import MemberInstallFlow
from bot.errors import PlatformInstallError


logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class SlackHttpApp:
    def __init__(self, app: AsyncApp, *, install: MemberInstallFlow | None = None, events: bool = True) -> None:
        self.app = app
        self.install = install
        self.events = events  # False in Socket Mode: events come over the socket, and bolt verifies no signature

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            raise TypeError(f"Unsupported ASGI scope type: {scope['type']!r}")
        request = AsgiHttpRequest(scope, receive)
        route = (scope["method"], _relative_path(scope))
        if route == ("POST", "/events") and self.events:
            status, headers, body = await self._events(request)
        elif route == ("GET", "/install") and self.install is not None:
            status, headers, body = 302, {"location": self.install.authorize_url()}, ""
        elif route == ("GET", "/oauth_redirect") and self.install is not None:
            status, headers, body = await _oauth_redirect(self.install, request)
        else:
            status, headers, body = 404, {"content-type": "text/plain; charset=utf-8"}, "Not Found"
        await _respond(send, status, headers, body)

    async def _events(self, request: AsgiHttpRequest) -> tuple[int, dict[str, str], str]:
        bolt_request = AsyncBoltRequest(
            body=await request.get_raw_body(), query=request.query_string, headers=request.get_headers()
        )
        response = await self.app.async_dispatch(bolt_request)
        return response.status, response.first_headers_without_set_cookie(), response.body


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
