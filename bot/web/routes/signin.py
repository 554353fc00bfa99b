"""Signing in and out. The member picker exists only for a local workspace served on a loopback address; elsewhere
members sign in by opening the signed link askwith posted to them."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from bot.store import models
from bot.store.web_members import people_of
from bot.web import texts
from bot.web.auth import config, current_identity, db, load_identity, sign_in, sign_out
from bot.web.render import page
from bot.web.tokens import MemberClaim


async def signin_page(request: Request) -> Response:
    if not config(request).local_picker:
        return page(request, "error.html", status_code=401, title=texts.SIGN_IN_TITLE, message=texts.SIGN_IN)
    members = await _local_members(request)
    nxt = _safe_next(request.query_params.get("next"))
    identity = await current_identity(request)
    return page(request, "signin.html", identity=identity, members=members, next=nxt)


async def signin_submit(request: Request) -> Response:
    if not config(request).local_picker:
        return page(request, "error.html", status_code=403, title=texts.SIGN_IN_TITLE, message=texts.SIGN_IN)
    form = await request.form()
    local = request.state.runtime.local
    identity = await load_identity(request, MemberClaim(local.workspace_id, str(form.get("member", ""))))
    if identity is None:
        return RedirectResponse("/signin", status_code=303)
    await sign_in(request, identity)
    return RedirectResponse(_safe_next(str(form.get("next", ""))) or "/workspace", status_code=303)


async def signout(request: Request) -> Response:
    await sign_out(request)
    return RedirectResponse("/signin" if config(request).local_picker else "/", status_code=303)


async def _local_members(request: Request) -> list[models.Member]:
    return await people_of(db(request), workspace_id=request.state.runtime.local.workspace_id)


def _safe_next(target: str | None) -> str:
    """Only a path on this site (never `//elsewhere` or a full URL), so sign-in cannot redirect off-site."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return ""
    return target


routes = [
    Route("/signin", signin_page, methods=["GET"]),
    Route("/signin", signin_submit, methods=["POST"]),
    Route("/signout", signout, methods=["POST"]),
]
