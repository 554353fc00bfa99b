"""`/askwith …` typed in the local workspace's composer: the member's own settings, through `MemberSettingsStore`, the
same operations as the Settings page and as Slack's and Discord's `/askwith` (and `/askwith timezone`).

    reply = await run_settings(db, port, "alice", SettingsCommand("share", "ask"))
    # "Saved. Memory: on: …. Sharing: your agent asks you (by DM) before sharing anything it found. …"
"""

from __future__ import annotations

from adapters.local.workspace import LocalWorkspace
from bot.errors import UnknownChannelError, UnknownTimeZoneError
from bot.platform.port import SharePolicy
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database
from bot.store.member_settings import MemberSettings, MemberSettingsStore
from bot.texts import settings_texts
from bot.web import texts
from bot.web.commands import SHARE_VALUES, SettingsCommand
from bot.web.workspace_view import channels_of


class SettingRefused(Exception):
    """A setting the command names that cannot be applied; its message says why."""


async def run_settings(
    db: Database, port: LocalWorkspace, member_id: str, command: SettingsCommand, *, workspace_zone: str = "UTC"
) -> str:
    """Apply `command` (a known action) and say where the member's settings now stand. `workspace_zone` is the zone
    of a member without one of their own (`/askwith timezone` names it)."""
    if command.action == "help":
        return texts.SETTINGS_USAGE
    store, key = MemberSettingsStore(db), WorkspaceKey(LocalWorkspace.platform, port.world.id)
    if command.action == "timezone":
        try:
            typed = command.argument
            current = await store.time_zone(key, member_id, typed)
        except UnknownTimeZoneError as exc:
            raise SettingRefused(str(exc)) from exc
        state = settings_texts.time_zone_state(current.time_zone, current.platform_time_zone, workspace_zone)
        return ("Saved. " if typed else "") + texts.time_zone_summary(state)
    if command.action in ("on", "off"):
        current = await store.set_opted_in(key, member_id, command.action == "on")
    elif command.action == "share":
        if command.argument.lower() not in SHARE_VALUES:
            raise SettingRefused(texts.not_a_setting(f"/askwith share {command.argument}".strip(), None))
        current = await store.set_share_policy(key, member_id, SharePolicy(command.argument.lower()))
    elif command.action in ("exclude", "include"):
        channel_id = await _channel_named(port, member_id, command.argument)
        try:
            current = await store.set_excluded(key, member_id, channel_id, command.action == "exclude")
        except UnknownChannelError as exc:  # a channel nobody has ingested yet
            raise SettingRefused(str(exc)) from exc
    else:
        return await _summary(port, member_id, await store.get(key, member_id))
    return "Saved. " + await _summary(port, member_id, current)


async def _channel_named(port: LocalWorkspace, member_id: str, name: str) -> str:
    """The id of the member's channel written as the sidebar shows it (`#general`, or `general`)."""
    wanted = "#" + name.strip().lstrip("#").casefold()
    for channel in await channels_of(port, member_id):
        if channel.label.casefold() == wanted:
            return channel.id
    raise SettingRefused(texts.no_such_channel(name.strip()))


async def _summary(port: LocalWorkspace, member_id: str, current: MemberSettings) -> str:
    labels = {c.id: c.label for c in await channels_of(port, member_id)}
    excluded = [labels.get(channel_id, channel_id) for channel_id in current.excluded_channels]
    return texts.settings_summary(texts.memory_state(current.opted_in), texts.share_meaning(current.share), excluded)
