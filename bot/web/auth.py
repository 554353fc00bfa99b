"""Signing in to the web app: by a signed link (Slack, Discord) or, on a loopback-bound local server, by picking a
member. The signed-in member is kept in a signed session cookie (Starlette's `SessionMiddleware`).

    identity = await current_identity(request)    # None when nobody is signed in
    identity = await require_identity(request)    # raises SignInRequired

A link carries `?t=<token>`: a valid one signs its member in (replacing any other session) and the browser is sent
on to the same address without the token (so it stays out of history, Referer headers and later access-log lines);
an expired or altered one is refused with 403 even when someone is already signed in, so a bad link never silently
shows another member's view. Sessions are kept in the database (`bot.web.sessions`): the cookie holds a random id,
every `askwith serve` on the database recognises it (and still does after a restart), sign-out ends the session
itself everywhere at once, and a sign-in lasts ASKWITH_WEB_SESSION_SECONDS, not as long as the link. The cookie is
signed with ASKWITH_WEB_SECRET: processes that share sign-ins must share that secret.

Admins (ASKWITH_WEB_ADMINS, and a local workspace's own "admins") are members of a workspace this process serves, and
admin of that workspace only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.requests import Request

from bot.base.time_zones import member_zone
from bot.errors import LinkInvalidError
from bot.settings import Settings
from bot.store.db import Database
from bot.store.web_members import member_named
from bot.web.access import Identity, is_admin
from bot.web.sessions import SessionStore
from bot.web.tokens import MemberClaim, verify_member_token


SESSION_KEY = "sid"
LINK_PARAM = "t"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class SignInRequired(Exception):
    """No member is signed in; the app answers with the sign-in page (or 401 where there is none)."""


class SignedInByLink(Exception):  # noqa: N818 - an outcome, not an error
    """A link signed its member in; the app redirects to `clean_url`, the same page without the token."""

    def __init__(self, clean_url: str) -> None:
        super().__init__(clean_url)
        self.clean_url = clean_url


@dataclass(frozen=True)
class WebConfig:
    settings: Settings
    secret: str  # signs links and the session cookie; never logged
    local_picker: bool  # a member picker stands in for sign-in (local workspace on a loopback address only)
    sessions: SessionStore


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
        await sign_in(request, identity)
        raise SignedInByLink(_without_link_token(request))
    sid = request.session.get(SESSION_KEY)
    claim = await config(request).sessions.member(db(request), sid) if isinstance(sid, str) else None
    if claim is None:
        return None
    identity = await load_identity(request, claim)
    if identity is None:  # the member is gone from the store: forget the session
        await sign_out(request)
    return identity


def _without_link_token(request: Request) -> str:
    rest = [(k, v) for k, v in request.query_params.multi_items() if k != LINK_PARAM]
    return request.url.path + (f"?{urlencode(rest)}" if rest else "")


async def require_identity(request: Request) -> Identity:
    identity = await current_identity(request)
    if identity is None:
        raise SignInRequired()
    return identity


async def load_identity(request: Request, claim: MemberClaim) -> Identity | None:
    member = await member_named(db(request), workspace_id=claim.workspace_id, name=claim.member)
    if member is None or member.is_bot:
        return None
    admins = config(request).settings.admin_names | _local_admins(request, member.workspace_id)
    served = member.workspace_id in served_workspaces(request)
    return Identity(
        workspace_id=member.workspace_id,
        member=member.name,
        platform_id=member.platform_id,
        display_name=member.display_name or member.name,
        is_admin=served and is_admin(member.name, member.platform_id, admins),
        time_zone=member_zone(member.time_zone, member.platform_time_zone),
    )


def _local_admins(request: Request, workspace_id: int) -> frozenset[str]:
    """The admins a local workspace's own file names (`World.admins`), for its members only."""
    local = request.state.runtime.local
    if local is None or local.workspace_id != workspace_id:
        return frozenset()
    return frozenset(local.port.world.admins)


def served_workspaces(request: Request) -> frozenset[int]:
    """The store ids of the workspaces this process serves: its platforms', or its local workspace."""
    runtime = request.state.runtime
    ids = {p.asks.workspace_id for p in runtime.platforms if p.asks is not None}
    if runtime.local is not None:
        ids.add(runtime.local.workspace_id)
    return frozenset(ids)


async def sign_in(request: Request, identity: Identity) -> None:
    """A new session (never the one the browser had: a planted session id is worthless)."""
    await sign_out(request)
    sid = await config(request).sessions.open(db(request), MemberClaim(identity.workspace_id, identity.member))
    request.session[SESSION_KEY] = sid


async def sign_out(request: Request) -> None:
    sid = request.session.pop(SESSION_KEY, None)
    if isinstance(sid, str):
        await config(request).sessions.end(db(request), sid)
