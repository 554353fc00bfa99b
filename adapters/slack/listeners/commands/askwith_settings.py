"""`/askwith`: a member's own settings — memory opt-in/out, share policy, excluded channels, time zone, DM access."""

from __future__ import annotations

from logging import Logger
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack import texts
from adapters.slack.command_text import SettingsCommand, parse_settings
from adapters.slack.services import SlackServices, services
from bot.asks.forget import forget_member
from bot.errors import UnknownChannelError, UnknownMemberError, UnknownTimeZoneError
from bot.store.member_settings import MemberSettings
from bot.texts import settings_texts


async def askwith_settings_callback(
    ack: AsyncAck, command: dict[str, Any], context: AsyncBoltContext, logger: Logger
) -> None:
    svc = services(context)
    parsed = parse_settings(command.get("text", ""))
    if parsed.action in ("help", "invalid", "connect"):
        await ack(text=_static_reply(svc, parsed), response_type="ephemeral")
        return
    if parsed.action == "timezone":
        await ack(text=await _time_zone(svc, parsed.zone, command["user_id"]), response_type="ephemeral")
        return
    if parsed.action in ("disconnect", "forget"):
        await ack(text=await _token_action(svc, parsed.action, command["user_id"]), response_type="ephemeral")
        return
    try:
        current = await _apply(svc, parsed, command["user_id"])
    except UnknownMemberError:
        await ack(text=texts.settings_not_synced(), response_type="ephemeral")
        return
    except UnknownChannelError:
        await ack(text=texts.unknown_channel_setting(f"<#{parsed.channel_id}>"), response_type="ephemeral")
        return
    summary = texts.settings_summary(current.opted_in, current.share, current.excluded_channels)
    if parsed.action == "opt_out":
        svc.port.drop_member_token(command["user_id"])  # every read with their token stops now, not at next run
        summary = texts.memory_turned_off(summary)
    await ack(text=summary, response_type="ephemeral")


async def _time_zone(svc: SlackServices, typed: str, member_id: str) -> str:
    """`/askwith timezone [zone|auto]`: set (or clear) the zone the member reads deadlines in, then say which it is."""
    store, workspace = svc.member_settings, await svc.workspace()
    try:
        current = await store.time_zone(workspace, member_id, typed)
    except UnknownMemberError:
        return texts.settings_not_synced()
    except UnknownTimeZoneError as exc:
        return str(exc)
    return texts.time_zone_reply(current, svc.settings.timezone, changed=bool(typed))


async def _token_action(svc: SlackServices, action: str, member_id: str) -> str:
    """`/askwith disconnect` (revoke + forget the token) or `/askwith forget` (that, and delete what memory holds
    only because of the member, their asks and what their agent shared in others'). Both are quick: one revoke call
    and a few deletes."""
    if action == "disconnect":
        return texts.disconnected(await svc.port.revoke_member_token(member_id))
    if svc.memory_events is not None:
        return settings_texts.forgot(await svc.memory_events.forget_member(member_id))
    # Live memory (or a process that ingests nothing): no memory events, the same deletion straight from the store.
    await svc.port.revoke_member_token(member_id)
    if svc.live_search is not None:
        svc.live_search.drop_action_token(member_id)
    bot = (await svc.port.identity()).bot_user_id
    return settings_texts.forgot(await forget_member(svc.db, svc.asks.workspace_id, member_id, other_readers={bot}))


def _static_reply(svc: SlackServices, parsed: SettingsCommand) -> str:
    if parsed.action == "help":
        return texts.SETTINGS_HELP
    if parsed.action == "invalid":
        return texts.settings_usage_error(parsed.raw)
    return texts.connect_link(svc.install.authorize_url()) if svc.install else texts.connect_unavailable()


async def _apply(svc: SlackServices, parsed: SettingsCommand, member_id: str) -> MemberSettings:
    store, workspace = svc.member_settings, await svc.workspace()
    if parsed.action in ("opt_in", "opt_out"):
        return await store.set_opted_in(workspace, member_id, parsed.action == "opt_in")
    if parsed.action == "share" and parsed.share is not None:
        return await store.set_share_policy(workspace, member_id, parsed.share)
    if parsed.action in ("exclude", "include") and parsed.channel_id:
        return await store.set_excluded(workspace, member_id, parsed.channel_id, parsed.action == "exclude")
    return await store.get(workspace, member_id)
