"""A member's askwith settings: ingestion opt-in, share policy, channels kept out of their agent's memory, time zone.

Platform commands (`/askwith` in Slack, Discord's settings command, the local UI) read and write them here.

    settings = MemberSettingsStore(db)
    await settings.set_share_policy(WorkspaceKey("slack", "T1"), "U1", SharePolicy.ASK)
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.base.time_zones import chosen_zone
from bot.errors import UnknownMemberError
from bot.platform.port import SharePolicy
from bot.store import models
from bot.store.channel_refs import resolve_channels
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database


@dataclass(frozen=True)
class MemberSettings:
    opted_in: bool
    share: SharePolicy
    excluded_channels: tuple[str, ...]  # platform channel ids
    time_zone: str | None = None  # the zone the member chose (`/askwith timezone`); None: not chosen
    platform_time_zone: str | None = None  # the zone of their platform profile (Slack's `tz`), when it gives one


class MemberSettingsStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.chat = ChatStore(db)

    async def get(self, workspace: WorkspaceKey, member_platform_id: str) -> MemberSettings:
        async with self.db.session() as session:
            member = await self._member(session, workspace, member_platform_id)
            excluded = (
                await session.execute(
                    select(models.Channel.platform_id)
                    .join(models.MemberExclusion, models.MemberExclusion.channel_id == models.Channel.id)
                    .where(models.MemberExclusion.member_id == member.id)
                    .order_by(models.Channel.platform_id)
                )
            ).scalars()
            return MemberSettings(
                member.opted_in, SharePolicy(member.share_policy), tuple(excluded),
                time_zone=member.time_zone, platform_time_zone=member.platform_time_zone,
            )  # fmt: skip

    async def set_opted_in(self, workspace: WorkspaceKey, member_platform_id: str, opted_in: bool) -> MemberSettings:
        async with self.db.session() as session, session.begin():
            (await self._member(session, workspace, member_platform_id)).opted_in = opted_in
        return await self.get(workspace, member_platform_id)

    async def set_share_policy(
        self, workspace: WorkspaceKey, member_platform_id: str, policy: SharePolicy
    ) -> MemberSettings:
        async with self.db.session() as session, session.begin():
            (await self._member(session, workspace, member_platform_id)).share_policy = policy.value
        return await self.get(workspace, member_platform_id)

    async def time_zone(self, workspace: WorkspaceKey, member_platform_id: str, typed: str) -> MemberSettings:
        """`/askwith timezone [zone|auto]` on every surface: set (or clear) the member's zone when something was
        typed, else only read their settings."""
        if typed:
            return await self.set_time_zone(workspace, member_platform_id, typed)
        return await self.get(workspace, member_platform_id)

    async def set_time_zone(self, workspace: WorkspaceKey, member_platform_id: str, typed: str) -> MemberSettings:
        """Set the zone the member reads times in from what they typed (`Europe/Paris`, any case), or clear it with
        `auto`; a zone the database does not know raises UnknownTimeZoneError with the closest names."""
        zone = chosen_zone(typed)
        async with self.db.session() as session, session.begin():
            (await self._member(session, workspace, member_platform_id)).time_zone = zone
        return await self.get(workspace, member_platform_id)

    async def set_excluded(
        self, workspace: WorkspaceKey, member_platform_id: str, channel_platform_id: str, excluded: bool
    ) -> MemberSettings:
        """Keep one channel (by platform id or name) out of (or let it back into) the member's agent's memory;
        an unknown channel raises UnknownChannelError naming it."""
        async with self.db.session() as session, session.begin():
            member = await self._member(session, workspace, member_platform_id)
            targets = set(await resolve_channels(session, member.workspace_id, [channel_platform_id]))
            current = set(
                (
                    await session.execute(
                        select(models.MemberExclusion.channel_id).where(models.MemberExclusion.member_id == member.id)
                    )
                ).scalars()
            )
            wanted = current | targets if excluded else current - targets
            await self.chat.set_exclusions(session, member.id, wanted)
        return await self.get(workspace, member_platform_id)

    async def _member(self, session: AsyncSession, workspace: WorkspaceKey, member_platform_id: str) -> models.Member:
        member = (
            await session.execute(
                select(models.Member)
                .join(models.Workspace, models.Workspace.id == models.Member.workspace_id)
                .where(
                    models.Workspace.platform == workspace.platform,
                    models.Workspace.external_id == workspace.external_id,
                    models.Member.platform_id == member_platform_id,
                )
            )
        ).scalar_one_or_none()
        if member is None:
            raise UnknownMemberError(member_platform_id)
        return member


async def member_and_excluded_channels(db: Database, member_db_id: int) -> tuple[str, set[str]]:
    """The member's platform id ("" if unknown) and the platform ids of the channels they keep out of memory."""
    async with db.session() as session:
        platform_id = await session.scalar(select(models.Member.platform_id).where(models.Member.id == member_db_id))
        excluded = await session.execute(
            select(models.Channel.platform_id)
            .join(models.MemberExclusion, models.MemberExclusion.channel_id == models.Channel.id)
            .where(models.MemberExclusion.member_id == member_db_id)
        )
        return str(platform_id or ""), set(excluded.scalars())
