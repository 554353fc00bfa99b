"""Cross-site request forgery protection for every state-changing request of the web app.

Two checks, both needed to pass, on every POST/PUT/PATCH/DELETE outside the platform endpoints (which carry their
platform's signature instead):

- Origin: when the browser says where the request comes from (`Origin`, else `Referer`), it must be this site
  (the Host the request was sent to, or ASKWITH_PUBLIC_URL).
- Token: the form carries `csrf_token`, equal to the random token kept in the visitor's signed session cookie
  (signed in or not, so the sign-in form is covered too). Pages put it in every form (`csrf_token(request)`).

    app = Starlette(middleware=[..., Middleware(SessionMiddleware, ...), Middleware(CsrfGuard, ...)])
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Collection
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.web import texts


log = logging.getLogger(__name__)

FIELD = "csrf_token"
SESSION_KEY = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def csrf_token(request: Request) -> str:
    """This visitor's token, made on first use."""
    token = request.session.get(SESSION_KEY)
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        request.session[SESSION_KEY] = token
    return token


class CsrfGuard:
    def __init__(self, app: ASGIApp, *, public_url: str, exempt: Collection[str]) -> None:
        self.app = app
        self.public_origin = _origin(public_url)
        self.exempt = exempt  # path prefixes of platform endpoints (filled in when platforms mount)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS or self._exempt(scope["path"]):
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        body = await request.body()  # bounded by BodyLimit, outside this middleware
        refusal = self._refusal(request, body)
        if refusal is not None:
            log.info("refused a cross-site or tokenless %s %s: %s", scope["method"], scope["path"], refusal)
            await PlainTextResponse(texts.CSRF_REFUSED, status_code=403)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _exempt(self, path: str) -> bool:
        return any(path == prefix or path.startswith(prefix.rstrip("/") + "/") for prefix in self.exempt)

    def _refusal(self, request: Request, body: bytes) -> str | None:
        claimed = request.headers.get("origin") or _origin(request.headers.get("referer", ""))
        if claimed and claimed not in {self.public_origin, _origin(str(request.base_url))}:
            return f"origin {claimed!r}"
        expected = request.session.get(SESSION_KEY)
        if not isinstance(expected, str) or not expected:
            return "no token in the session"
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            return f"content type {content_type!r}"
        sent = parse_qs(body.decode("latin-1")).get(FIELD, [""])[0]
        if not hmac.compare_digest(sent.encode("latin-1"), expected.encode("latin-1")):
            return "wrong token"
        return None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body read here, once; after it, the server's own messages (a disconnect, when the client goes)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
