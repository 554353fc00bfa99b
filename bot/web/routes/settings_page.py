"""The signed-in member's own settings page in the local web workspace: memory on/off, share policy, channels kept
out of their agent's memory, approvals waiting for them, their recent asks, and what their agent shared with whom.

The changes go through `MemberSettingsStore`, the same operations as Slack's and Discord's settings commands.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from adapters.local.workspace import LocalWorkspace
from bot.asks.read_models.member_page import member_activity
from bot.errors import UnknownChannelError
from bot.platform.port import SharePolicy
from bot.store.chat_store import WorkspaceKey
from bot.store.member_settings import MemberSettingsStore
from bot.web import texts
from bot.web.auth import db
from bot.web.render import page
from bot.web.routes.workspace import local_member
from bot.web.workspace_view import approvals_of, channels_of


MEMORY = {"on": True, "off": False}


def _key(port: LocalWorkspace) -> WorkspaceKey:
    return WorkspaceKey(LocalWorkspace.platform, port.world.id)


async def settings_page(request: Request) -> Response:
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    current = await MemberSettingsStore(db(request)).get(_key(local.port), identity.platform_id)
    channels = await channels_of(local.port, identity.platform_id)
    bot_dm = channels[0].id  # askwith's own DM: never in memory, nothing to exclude
    activity = await member_activity(db(request), identity.workspace_id, identity.member)
    return page(
        request, "settings.html", identity=identity, channels=channels, channel_id=None, settings_page=True,
        current=current, excludable=[c for c in channels if c.id != bot_dm], policies=list(SharePolicy),
        share_meaning=texts.share_meaning, approvals=approvals_of(local.port, identity.platform_id),
        activity=activity, saved=texts.SETTINGS_SAVED.get(request.query_params.get("saved", ""), ""),
        memory_state=texts.memory_state(current.opted_in),
        names={m.name: m.display_name or m.name for m in local.port.world.members.values()},  # people, not handles
    )  # fmt: skip


async def set_memory(request: Request) -> Response:
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    wanted = MEMORY.get(str((await request.form()).get("memory", "")))
    if wanted is None:
        return _bad_request(request, identity)
    await MemberSettingsStore(db(request)).set_opted_in(_key(local.port), identity.platform_id, wanted)
    return RedirectResponse("/settings?saved=memory", status_code=303)


async def set_share(request: Request) -> Response:
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    try:
        policy = SharePolicy(str((await request.form()).get("share", "")))
    except ValueError:
        return _bad_request(request, identity)
    await MemberSettingsStore(db(request)).set_share_policy(_key(local.port), identity.platform_id, policy)
    return RedirectResponse("/settings?saved=share", status_code=303)


async def set_exclusions(request: Request) -> Response:
    """The form lists every channel the member reads; the ticked ones are kept out of memory, the rest let in."""
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    ticked = {str(c) for c in (await request.form()).getlist("exclude")}
    readable = {c.id for c in await channels_of(local.port, identity.platform_id)}
    if not ticked <= readable:
        return _bad_request(request, identity)
    store = MemberSettingsStore(db(request))
    current = set((await store.get(_key(local.port), identity.platform_id)).excluded_channels)
    try:
        for channel_id in sorted(readable):
            if (channel_id in ticked) != (channel_id in current):
                await store.set_excluded(_key(local.port), identity.platform_id, channel_id, channel_id in ticked)
    except UnknownChannelError:  # a channel nobody has ingested yet
        return _bad_request(request, identity)
    return RedirectResponse("/settings?saved=exclusions", status_code=303)


def _bad_request(request: Request, identity: object) -> Response:
    return page(request, "error.html", identity=identity, status_code=400, title=texts.BAD_REQUEST_TITLE,
                message=texts.BAD_SETTING)  # fmt: skip


routes = [
    Route("/settings", settings_page, methods=["GET"]),
    Route("/settings/memory", set_memory, methods=["POST"]),
    Route("/settings/share", set_share, methods=["POST"]),
    Route("/settings/exclusions", set_exclusions, methods=["POST"]),
]
