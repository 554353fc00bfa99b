"""A bound on request bodies for every route of the web app (platform endpoints mounted in it included).

A request whose Content-Length exceeds the bound is answered 413 before a byte of its body is read; one that
declares no length (chunked) is cut off with 413 as soon as what arrived exceeds it. Nothing is buffered here: the
application reads the body as it streams in.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send


log = logging.getLogger(__name__)


class _TooLarge(Exception):
    pass


class BodyLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and not _within(declared, self.max_bytes):
            await _too_large(scope, send)
            return
        started = False
        received = 0

        async def bounded_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                raise _TooLarge()
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, bounded_receive, tracking_send)
        except _TooLarge:
            if started:  # too late for a status: the connection is closed instead
                raise
            await _too_large(scope, send)


def _within(declared: bytes, limit: int) -> bool:
    return declared.isdigit() and len(declared) <= 15 and int(declared) <= limit


async def _too_large(scope: Scope, send: Send) -> None:
    log.info("refused a request body over the limit: %s %s", scope.get("method"), scope.get("path"))
    body = b"Request body too large"
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
