"""The web app: transcripts for members and admins, the local web workspace, health and metrics.

    app = build_app(settings, secret=secret, start=lambda: running(settings), local_picker=True)
    # uvicorn.Server(uvicorn.Config(app, host=..., port=...)).serve()

The app's lifespan *is* the process: it enters `start()` (database, workers, schedule, platforms) before the first
request and leaves it on shutdown; route handlers find the runtime (a `ServedProcess`) in `request.state.runtime`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount

from bot.errors import LinkExpiredError, LinkInvalidError
from bot.settings import Settings
from bot.web import texts
from bot.web.auth import SignedInByLink, SignInRequired, WebConfig, current_identity
from bot.web.csrf import CsrfGuard
from bot.web.limits import BodyLimit
from bot.web.render import page
from bot.web.routes import all_routes
from bot.web.served import ServedProcess
from bot.web.sessions import SessionStore


log = logging.getLogger(__name__)
RuntimeFactory = Callable[[], AbstractAsyncContextManager[ServedProcess]]


def build_app(settings: Settings, *, secret: str, start: RuntimeFactory, local_picker: bool) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        async with AsyncExitStack() as stack:
            try:
                runtime = await stack.enter_async_context(start())
            except Exception as exc:  # the ASGI server prints the trace; the operator reads this line first
                log.error("askwith did not start: %s", exc)
                raise
            _mount_platforms(app, runtime, platform_paths)
            yield {"runtime": runtime}

    platform_paths: list[str] = []  # platform endpoints carry their own signatures: no CSRF token there
    app = Starlette(
        routes=all_routes(),
        # Outermost first: bodies are bounded before anything reads them, then the session, then CSRF checks.
        middleware=[
            Middleware(BodyLimit, max_bytes=settings.max_request_bytes),
            _session_middleware(settings, secret),
            Middleware(CsrfGuard, public_url=settings.resolved_public_url, exempt=platform_paths),
        ],
        exception_handlers={
            SignInRequired: _sign_in_required,
            SignedInByLink: _signed_in_by_link,
            LinkInvalidError: _link_refused,
            LinkExpiredError: _link_refused,
            404: _not_found,
            405: _not_found,
        },
        lifespan=lifespan,
    )
    app.state.web = WebConfig(settings, secret, local_picker, SessionStore(ttl_s=settings.web_session_seconds))
    return app


def _session_middleware(settings: Settings, secret: str) -> Middleware:
    return Middleware(
        SessionMiddleware,
        secret_key=secret,
        session_cookie="askwith_session",
        max_age=settings.web_session_seconds,
        same_site="lax",
        https_only=settings.resolved_public_url.startswith("https://"),
    )


def _mount_platforms(app: Starlette, runtime: ServedProcess, paths: list[str]) -> None:
    """Platform HTTP endpoints (Slack's /slack) go in front of the web routes."""
    platforms = [p for p in runtime.platforms if p.asgi and p.mount_path]
    mounts: list[BaseRoute] = [Mount(p.mount_path, app=p.asgi) for p in platforms]  # type: ignore[arg-type]
    app.router.routes[:0] = mounts
    paths.extend(p.mount_path for p in platforms if p.mount_path)


async def _sign_in_required(request: Request, exc: Exception) -> Response:
    if request.app.state.web.local_picker:
        return RedirectResponse(f"/signin?next={request.url.path}", status_code=303)
    return page(request, "error.html", status_code=401, title=texts.SIGN_IN_TITLE, message=texts.SIGN_IN)


async def _signed_in_by_link(request: Request, exc: Exception) -> Response:
    target = exc.clean_url if isinstance(exc, SignedInByLink) else "/"
    return RedirectResponse(target, status_code=303)


async def _not_found(request: Request, exc: Exception) -> Response:
    """An unknown address: a page in the app's layout (header, sign-out) with a way back, not a bare "Not Found"."""
    try:
        identity = await current_identity(request)
    except (LinkInvalidError, LinkExpiredError, SignedInByLink):  # a link token on an unknown address: not signed in
        identity = None
    status = getattr(exc, "status_code", 404)
    return page(request, "error.html", identity=identity, status_code=status, title=texts.NOT_FOUND_TITLE,
                message=texts.NO_SUCH_PAGE, home=True)  # fmt: skip


async def _link_refused(request: Request, exc: Exception) -> Response:
    return page(request, "error.html", status_code=403, title=texts.LINK_REFUSED_TITLE, message=str(exc))
