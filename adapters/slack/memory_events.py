"""Slack events -> the live-memory core (`memory_ingest.live.LiveMemory` through the ingestion worker).

Each method takes the `event` object of one Events API delivery and changes memory at once; none triggers a full
mirror (a member or channel askwith has not met is looked up alone).

    message (+ thread_broadcast)          stored, if its channel is remembered
    message_changed                       the stored text replaced (a broadcast is the same message as its reply)
    message_deleted                       deleted and tombstoned
    channel_convert_to_private / _public  the channel's kind follows
    member_joined_channel                 the member reads the channel (the bot: the channel is learnt, then read)
    member_left_channel / channel_left /  the member no longer reads it; the bot leaving leaves nobody reading it
      group_left
    channel_archive / group_archive       kept and readable (as on Slack), no longer polled; unarchive resumes
    channel_deleted / group_deleted       everything memory holds of it goes
    user_change                           the member's names follow; deleted: true, they read nothing any more
    team_join                             the new member is stored (no member listing)
    tokens_revoked                        each member's token disabled, its DMs left with no reader, member told
    (app_uninstalled: the workspace leaves, everything deleted: adapters.slack.leaving)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from adapters.slack import texts
from adapters.slack.convert import member_from_slack, message_from_slack, message_id
from adapters.slack.port import SlackPort
from bot.platform.port import ChannelKind
from bot.store.chat_store import WorkspaceKey
from bot.store.ingest_status import ObjectKind
from bot.store.member_reads import unread_token_channels
from memory_ingest.worker import IngestWorker


logger = logging.getLogger(__name__)


@dataclass
class SlackMemoryEvents:
    port: SlackPort
    worker: IngestWorker

    async def workspace_id(self) -> int:
        return self.worker.workspace_id or (await self.worker.mirror()).workspace_id

    # ------------------------------------------------------------------ messages
    async def message(self, event: dict[str, Any]) -> None:
        await self.worker.ingest_message(self.port.live_message(event))

    async def message_changed(self, event: dict[str, Any]) -> None:
        new = event.get("message") or {}
        if new.get("subtype") == "tombstone" and new.get("ts"):  # a thread parent deleted, its replies kept
            await self.worker.live.delete_messages(
                await self.workspace_id(), [message_id(event["channel"], new["ts"])]
            )
            return
        if not new.get("ts") or not self.port.is_ingestible({**new, "channel": event["channel"]}, ""):
            return
        await self.worker.apply_edit(message_from_slack(event["channel"], new))

    async def message_deleted(self, event: dict[str, Any]) -> None:
        deleted = event.get("deleted_ts") or (event.get("previous_message") or {}).get("ts")
        if deleted:
            await self.worker.live.delete_messages(await self.workspace_id(), [message_id(event["channel"], deleted)])

    async def channel_converted(self, event: dict[str, Any], kind: ChannelKind) -> None:
        await self.worker.live.set_channel_kind(await self.workspace_id(), event["channel"], kind)

    # ------------------------------------------------------------------ membership
    async def member_joined(self, event: dict[str, Any], bot_user_id: str) -> None:
        channel, user = _channel_id(event), event["user"]
        if user == bot_user_id:
            await self.worker.learn_channel(channel)  # who reads it now, looked up alone; the next run reads it
            return
        ws = await self.workspace_id()
        if not await self.worker.live.add_reader(ws, channel, user):
            await self.worker.learn_member(user)
            if not await self.worker.live.add_reader(ws, channel, user):
                await self.worker.learn_channel(channel)

    async def member_left(self, event: dict[str, Any], bot_user_id: str) -> None:
        channel, user = _channel_id(event), event.get("user", "")
        if user == bot_user_id or not user:
            await self.bot_left(event)
            return
        await self.worker.live.remove_reader(await self.workspace_id(), channel, user)

    async def bot_left(self, event: dict[str, Any]) -> None:
        """askwith can no longer verify who reads the channel: nobody reads its memory until the bot is back."""
        await self.worker.live.forget_channel_readers(await self.workspace_id(), _channel_id(event))

    # ------------------------------------------------------------------ channel lifecycle
    async def archived(self, event: dict[str, Any], archived: bool) -> None:
        ws, channel = await self.workspace_id(), _channel_id(event)
        if archived:
            await self.worker.status.pause(ws, ObjectKind.CHANNEL, channel, "archived")
        else:
            await self.worker.status.reset(ws, ObjectKind.CHANNEL, channel)

    async def channel_deleted(self, event: dict[str, Any]) -> None:
        await self.worker.live.delete_channel(await self.workspace_id(), _channel_id(event))

    # ------------------------------------------------------------------ members and tokens
    async def user_changed(self, event: dict[str, Any]) -> None:
        user = event.get("user") or {}
        if not user.get("id"):
            return
        ws = await self.workspace_id()
        member = member_from_slack(user)
        await self.worker.store_member(member)  # names as the event gives them: no call to Slack
        await self.worker.live.set_member_deactivated(ws, member.id, member.deactivated)
        if member.deactivated:
            self.port.drop_member_token(member.id)

    async def team_joined(self, event: dict[str, Any]) -> None:
        """A new member of the workspace: stored from the event (they read channels as they join them)."""
        if (user := event.get("user") or {}).get("id"):
            await self.worker.store_member(member_from_slack(user))

    async def tokens_revoked(self, event: dict[str, Any]) -> None:
        for member in (event.get("tokens") or {}).get("oauth") or []:
            await self.token_lost(member, "revoked on Slack")

    async def token_lost(self, member_id: str, reason: str) -> None:
        """A member's token no longer works (revoked, refused): disable it; the first time,
        `after_token_disabled` runs (the ingestion worker calls it too when a read is refused)."""
        self.port.drop_member_token(member_id)
        key = WorkspaceKey("slack", (await self.port.identity()).team_id)
        ws = self.worker.workspace_id or await self.worker.live.workspace_id(key)
        if ws is None:  # refused during the very first mirroring: the token is skipped now and disabled next run
            logger.warning("Skipping member %s's token: %s", member_id, reason)
            return
        await self.worker.guard(ws).disable_token(member_id, reason)

    async def after_token_disabled(self, member_id: str, reason: str) -> None:
        """Never use the token again, leave what only it could read with no reader (askwith cannot verify it any
        more), forget the token, and tell the member."""
        self.port.drop_member_token(member_id)
        await self.unread_token_channels(member_id)
        await self.port.revoke_member_token(member_id)
        await tell_token_disabled(self.port, member_id, reason)

    async def unread_token_channels(self, member_id: str) -> None:
        ws = await self.workspace_id()
        others = await self._other_readers(member_id)
        await unread_token_channels(self.worker.db, ws, member_id, other_readers=others)

    async def forget_member(self, member_id: str) -> dict[str, int]:
        """`/askwith forget`: revoke the member's token at Slack and delete their memory (`bot.asks.forget`)."""
        others = await self._other_readers(member_id)
        await self.port.revoke_member_token(member_id)
        return await self.worker.live.forget_member(await self.workspace_id(), member_id, other_readers=others)

    async def _other_readers(self, member_id: str) -> set[str]:
        bot = (await self.port.identity()).bot_user_id
        return ({bot} | await self.port.token_holders()) - {member_id}


async def tell_token_disabled(port: SlackPort, member_id: str, reason: str) -> None:
    """DM a member that askwith stopped using their token (`IngestWorker.on_token_disabled`)."""
    await port.post(await port.open_dm(member_id), texts.token_disabled(reason))


def _channel_id(event: dict[str, Any]) -> str:
    channel = event.get("channel")
    return channel["id"] if isinstance(channel, dict) else str(channel or "")
