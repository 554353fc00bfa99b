"""Signing in to the web app: by a signed link (Slack, Discord) or, on a loopback-bound local server, by picking a
member. The signed-in member is kept in a signed session cookie (Starlette's `SessionMiddleware`).

    identity = await current_identity(request)    # None when nobody is signed in
    identity = await require_identity(request)    # raises SignInRequired

A link carries `?t=<token>`: a valid one signs its member in (replacing any other session); an expired or altered one
is refused with 403 even when someone is already signed in, so a bad link never silently shows another member's view.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import select
from starlette.requests import Request

from bot.errors import LinkInvalidError
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from bot.web.access import Identity, is_admin
from bot.web.tokens import MemberClaim, verify_member_token


SESSION_KEY = "member"
LINK_PARAM = "t"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class SignInRequired(Exception):
    """No member is signed in; the app answers with the sign-in page (or 401 where there is none)."""


@dataclass(frozen=True)
class WebConfig:
    settings: Settings
    secret: str  # signs links and the session cookie; never logged
    local_picker: bool  # a member picker stands in for sign-in (local workspace on a loopback address only)


def picker_allowed(settings: Settings, *, local_workspace: bool) -> bool:
    return local_workspace and settings.web_host in LOOPBACK_HOSTS


def config(request: Request) -> WebConfig:
    return request.app.state.web


def db(request: Request) -> Database:
    return request.state.runtime.db


async def current_identity(request: Request) -> Identity | None:
    token = request.query_params.get(LINK_PARAM)
    if token is not None:
        claim = verify_member_token(config(request).secret, token, now=time.time())
        identity = await load_identity(request, claim)
        if identity is None:
            raise LinkInvalidError()
        sign_in(request, identity)
        return identity
    raw = request.session.get(SESSION_KEY)
    if not isinstance(raw, dict):
        return None
    identity = await load_identity(request, MemberClaim(int(raw.get("w", -1)), str(raw.get("m", ""))))
    if identity is None:  # the member is gone from the store: forget the session
        sign_out(request)
    return identity


async def require_identity(request: Request) -> Identity:
    identity = await current_identity(request)
    if identity is None:
        raise SignInRequired()
    return identity


async def load_identity(request: Request, claim: MemberClaim) -> Identity | None:
    stmt = select(models.Member).where(
        models.Member.workspace_id == claim.workspace_id, models.Member.name == claim.member
    )
    async with db(request).session() as session:
        member = (await session.execute(stmt)).scalar_one_or_none()
    if member is None or member.is_bot:
        return None
    admins = config(request).settings.admin_names
    return Identity(
        workspace_id=member.workspace_id,
        member=member.name,
        platform_id=member.platform_id,
        display_name=member.display_name or member.name,
        is_admin=is_admin(member.name, member.platform_id, admins),
    )


def sign_in(request: Request, identity: Identity) -> None:
    request.session[SESSION_KEY] = {"w": identity.workspace_id, "m": identity.member}


def sign_out(request: Request) -> None:
    request.session.pop(SESSION_KEY, None)
