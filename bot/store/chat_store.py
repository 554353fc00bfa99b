"""The one store API for the chat record: workspaces, members, channels, memberships, messages and cursors.

Writes are idempotent: mirroring the same platform objects twice changes nothing, and a message is unique by its
platform id within its workspace. Reads for agents do NOT live here; they go through the viewer-scoped memory API
in `bot.memory`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import case, delete, exists, func, select, true, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.base.time_zones import known_zone
from bot.errors import UnknownMemberError
from bot.platform import port
from bot.store import bulk, models, truth
from bot.store.db import Database
from bot.store.sanitize import db_text
from bot.store.world import MemberPolicy


# What a later mirror may change; never `time_zone`, the member's own choice (`platform_time_zone` is the profile's).
MEMBER_PROFILE = ("name", "display_name", "is_bot", "deactivated", "platform_time_zone")


@dataclass(frozen=True)
class WorkspaceKey:
    platform: str
    external_id: str


class ChatStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def _insert(self, table: type[models.Base]):  # noqa: ANN202 - dialect-specific Insert
        return self.db.insert(table)

    # ------------------------------------------------------------------ workspace, members, channels
    async def ensure_workspace(self, session: AsyncSession, key: WorkspaceKey, name: str) -> int:
        stmt = self._insert(models.Workspace).values(platform=key.platform, external_id=key.external_id, name=name)
        await session.execute(stmt.on_conflict_do_nothing(index_elements=["platform", "external_id"]))
        return (
            await session.execute(
                select(models.Workspace.id).where(
                    models.Workspace.platform == key.platform, models.Workspace.external_id == key.external_id
                )
            )
        ).scalar_one()

    async def upsert_members(
        self,
        session: AsyncSession,
        workspace_id: int,
        members: Iterable[port.Member],
        policies: dict[str, MemberPolicy] | None = None,
    ) -> dict[str, int]:
        """Mirror members; a new member takes its initial policy from `policies`, an existing one keeps its own.
        Returns every member's id (platform id -> database id)."""
        await self._write_members(session, workspace_id, members, {} if policies is None else policies)
        return await self.member_ids(session, workspace_id)

    async def upsert_member(
        self, session: AsyncSession, workspace_id: int, member: port.Member, policy: MemberPolicy | None = None
    ) -> int:
        """Mirror one member (an event named them); returns their database id, without reading everyone's."""
        await self._write_members(session, workspace_id, [member], {member.id: policy} if policy else {})
        member_id = await truth.member_id(session, workspace_id, member.id)
        if member_id is None:
            raise UnknownMemberError(member.id)
        return member_id

    async def _write_members(
        self,
        session: AsyncSession,
        workspace_id: int,
        members: Iterable[port.Member],
        policies: dict[str, MemberPolicy],
    ) -> None:
        rows = []
        for m in members:
            policy = policies.get(m.id)
            rows.append(
                {
                    "workspace_id": workspace_id,
                    "platform_id": m.id,
                    "name": m.name,
                    "display_name": m.display_name,
                    "is_bot": m.is_bot,
                    "deactivated": m.deactivated,
                    "platform_time_zone": known_zone(m.time_zone),  # a zone the database lacks is no zone
                    "opted_in": bool(policy and policy.opted_in),
                    "share_policy": str(policy.share) if policy else port.SharePolicy.AUTO.value,
                }
            )
        for chunk in await bulk.row_chunks(session, models.Member, rows):
            stmt = self._insert(models.Member).values(chunk)
            stmt = stmt.on_conflict_do_update(
                index_elements=["workspace_id", "platform_id"],
                set_={column: stmt.excluded[column] for column in MEMBER_PROFILE},
            )
            await session.execute(stmt)

    async def member_ids(self, session: AsyncSession, workspace_id: int) -> dict[str, int]:
        result = await session.execute(
            select(models.Member.platform_id, models.Member.id).where(models.Member.workspace_id == workspace_id)
        )
        return {key: value for key, value in result.all()}

    async def upsert_channels(
        self, session: AsyncSession, workspace_id: int, channels: Iterable[port.Channel], member_ids: dict[str, int]
    ) -> dict[str, int]:
        """Mirror channels and replace their memberships with the platform's current ones."""
        channels = list(channels)
        rows = [
            {"workspace_id": workspace_id, "platform_id": c.id, "name": c.name, "kind": str(c.kind)} for c in channels
        ]
        for chunk in await bulk.row_chunks(session, models.Channel, rows):
            stmt = self._insert(models.Channel).values(chunk)
            stmt = stmt.on_conflict_do_update(
                index_elements=["workspace_id", "platform_id"],
                set_={"name": stmt.excluded.name, "kind": stmt.excluded.kind},
            )
            await session.execute(stmt)
        channel_ids = await self.channel_ids(session, workspace_id)
        wanted = {(channel_ids[c.id], member_ids[m]) for c in channels for m in c.member_ids if m in member_ids}
        await self._replace_memberships(session, {channel_ids[c.id] for c in channels}, wanted)
        return channel_ids

    async def _replace_memberships(
        self, session: AsyncSession, channel_ids: set[int], wanted: set[tuple[int, int]]
    ) -> None:
        """Make the memberships of `channel_ids` exactly `wanted` ((channel, member) pairs), in a few statements."""
        current: set[tuple[int, int]] = set()
        for batch in await bulk.chunks(session, sorted(channel_ids), per_item=1):
            rows = await session.execute(
                select(models.Membership.channel_id, models.Membership.member_id).where(
                    models.Membership.channel_id.in_(batch)
                )
            )
            current.update((c, m) for c, m in rows.all())
        for pairs in await bulk.chunks(session, sorted(current - wanted), per_item=2):
            await session.execute(
                delete(models.Membership).where(
                    tuple_(models.Membership.channel_id, models.Membership.member_id).in_(pairs)
                )
            )
        new = [{"channel_id": c, "member_id": m} for c, m in sorted(wanted - current)]
        for chunk in await bulk.row_chunks(session, models.Membership, new):
            await session.execute(self._insert(models.Membership).values(chunk).on_conflict_do_nothing())

    async def deactivated_member_ids(self, session: AsyncSession, workspace_id: int) -> set[str]:
        result = await session.execute(
            select(models.Member.platform_id).where(
                models.Member.workspace_id == workspace_id, models.Member.deactivated
            )
        )
        return set(result.scalars())

    async def channel_ids(self, session: AsyncSession, workspace_id: int) -> dict[str, int]:
        result = await session.execute(
            select(models.Channel.platform_id, models.Channel.id).where(models.Channel.workspace_id == workspace_id)
        )
        return {key: value for key, value in result.all()}

    async def set_exclusions(self, session: AsyncSession, member_id: int, channel_ids: Iterable[int]) -> None:
        await session.execute(delete(models.MemberExclusion).where(models.MemberExclusion.member_id == member_id))
        rows = [{"member_id": member_id, "channel_id": c} for c in sorted(set(channel_ids))]
        for chunk in await bulk.row_chunks(session, models.MemberExclusion, rows):
            await session.execute(self._insert(models.MemberExclusion).values(chunk).on_conflict_do_nothing())

    # ------------------------------------------------------------------ messages and cursors
    async def add_messages(
        self,
        session: AsyncSession,
        workspace_id: int,
        messages: Iterable[port.ChatMessage],
        channel_ids: dict[str, int],
        member_ids: dict[str, int],
        *,
        opted_in_authors_only: bool = False,  # a message by a member who has not opted in is never stored
    ) -> int:
        """Insert messages not stored yet and not deleted on the platform (tombstoned); returns how many were new.
        Text is made storable (`db_text`). Unknown senders are an error."""
        messages = list(messages)
        # Opt-ins are read after the lock: an opt-out's deletion (which takes it alone) never misses a row stored here.
        await truth.lock_message_writes(self.db, session, workspace_id, deleting=False)
        gone = await truth.tombstoned(session, workspace_id, [m.id for m in messages])
        if opted_in_authors_only:
            authors = await truth.opted_in(session, workspace_id, {m.sender_id for m in messages})
            gone |= {m.id for m in messages if m.sender_id not in authors}
        rows = []
        for m in messages:
            if m.id in gone:
                continue
            if m.sender_id not in member_ids:
                raise UnknownMemberError(m.sender_id)
            rows.append(
                {
                    "workspace_id": workspace_id,
                    "channel_id": channel_ids[m.channel_id],
                    "platform_id": m.id,
                    "thread_parent_platform_id": m.thread_id,
                    "sender_id": member_ids[m.sender_id],
                    "ts": m.ts.astimezone(UTC),
                    "text": db_text(m.text),
                    "edited_at": m.edited_at.astimezone(UTC) if m.edited_at else None,
                }
            )
        new = 0
        for chunk in await bulk.row_chunks(session, models.Message, rows):
            stmt = (
                self._insert(models.Message)
                .values(chunk)
                .on_conflict_do_nothing(index_elements=["workspace_id", "platform_id"])
                .returning(models.Message.id)
            )
            inserted = list((await session.execute(stmt)).scalars())
            new += len(inserted) - await truth.drop_tombstoned(session, workspace_id, inserted)
        return new

    async def get_cursor(self, session: AsyncSession, channel_id: int, thread_platform_id: str = "") -> str | None:
        return (
            await session.execute(
                select(models.IngestCursor.cursor).where(
                    models.IngestCursor.channel_id == channel_id,
                    models.IngestCursor.thread_platform_id == thread_platform_id,
                )
            )
        ).scalar_one_or_none()

    async def set_cursor(
        self, session: AsyncSession, channel_id: int, cursor: str, thread_platform_id: str = ""
    ) -> None:
        await self.set_cursors(session, {(channel_id, thread_platform_id): cursor})

    async def set_cursors(self, session: AsyncSession, cursors: dict[tuple[int, str], str]) -> None:
        """Store many cursors at once; keys are (channel id, thread platform id or '' for the channel itself)."""
        now = datetime.now(UTC)
        rows = [
            {"channel_id": c, "thread_platform_id": t, "cursor": cursor, "updated_at": now}
            for (c, t), cursor in sorted(cursors.items())
        ]
        for chunk in await bulk.row_chunks(session, models.IngestCursor, rows):
            stmt = self._insert(models.IngestCursor).values(chunk)
            stmt = stmt.on_conflict_do_update(
                index_elements=["channel_id", "thread_platform_id"],
                set_={"cursor": stmt.excluded.cursor, "updated_at": stmt.excluded.updated_at},
            )
            await session.execute(stmt)

    async def cursors(self, session: AsyncSession, workspace_id: int) -> dict[tuple[int, str], str]:
        """Every ingestion cursor of a workspace, keyed (channel id, thread platform id or '')."""
        result = await session.execute(
            select(models.IngestCursor.channel_id, models.IngestCursor.thread_platform_id, models.IngestCursor.cursor)
            .join(models.Channel, models.Channel.id == models.IngestCursor.channel_id)
            .where(models.Channel.workspace_id == workspace_id)
        )
        return {(c, t): cursor for c, t, cursor in result.all()}

    async def thread_markers(self, session: AsyncSession, channel_id: int) -> dict[str, str]:
        """Each known thread's marker (`ChatPort.thread_states`) as of its last read, '' when never compared."""
        result = await session.execute(
            select(models.IngestCursor.thread_platform_id, models.IngestCursor.latest_reply).where(
                models.IngestCursor.channel_id == channel_id, models.IngestCursor.thread_platform_id != ""
            )
        )
        return {thread: marker for thread, marker in result.all()}

    async def set_thread_marker(self, session: AsyncSession, channel_id: int, thread_id: str, marker: str) -> None:
        await session.execute(
            update(models.IngestCursor)
            .where(models.IngestCursor.channel_id == channel_id, models.IngestCursor.thread_platform_id == thread_id)
            .values(latest_reply=marker[:64])
        )

    async def ensure_thread_cursors(self, session: AsyncSession, threads: Iterable[tuple[int, str]]) -> None:
        """Remember threads, as (channel id, thread platform id), to read from their start; a thread already being
        read keeps its cursor."""
        now = datetime.now(UTC)
        rows = [
            {"channel_id": c, "thread_platform_id": t, "cursor": "", "updated_at": now}
            for c, t in sorted(set(threads))
            if t
        ]
        for chunk in await bulk.row_chunks(session, models.IngestCursor, rows):
            stmt = self._insert(models.IngestCursor).values(chunk)
            await session.execute(stmt.on_conflict_do_nothing(index_elements=["channel_id", "thread_platform_id"]))

    async def find_workspace(self, session: AsyncSession, key: WorkspaceKey) -> int | None:
        return (
            await session.execute(
                select(models.Workspace.id).where(
                    models.Workspace.platform == key.platform, models.Workspace.external_id == key.external_id
                )
            )
        ).scalar_one_or_none()

    async def ingestable_channel_ids(
        self, session: AsyncSession, workspace_id: int, *, channel_id: int | None = None
    ) -> set[int]:
        """Channels at least one opted-in human member reads without excluding them: the only ones ingested.

        Ingestion is opt-in per member, so a channel nobody opted in to (a private channel of opted-out members,
        the bot-only agents channel) is never pulled.
        """
        excluded = exists().where(
            models.MemberExclusion.member_id == models.Member.id,
            models.MemberExclusion.channel_id == models.Membership.channel_id,
        )
        result = await session.execute(
            select(models.Membership.channel_id)
            .join(models.Member, models.Member.id == models.Membership.member_id)
            .where(
                models.Member.workspace_id == workspace_id,
                models.Member.opted_in,
                ~models.Member.is_bot,
                ~excluded,
                true() if channel_id is None else models.Membership.channel_id == channel_id,
            )
            .distinct()
        )
        return set(result.scalars())

    async def member_counts(self, session: AsyncSession, workspace_id: int) -> tuple[int, int]:
        """(human members, opted-in human members) of a workspace."""
        row = (
            await session.execute(
                select(func.count(), func.coalesce(func.sum(case((models.Member.opted_in, 1), else_=0)), 0)).where(
                    models.Member.workspace_id == workspace_id, ~models.Member.is_bot
                )
            )
        ).one()
        return int(row[0]), int(row[1])

    async def message_count(self, session: AsyncSession, workspace_id: int) -> int:
        return (
            await session.execute(
                select(func.count()).select_from(models.Message).where(models.Message.workspace_id == workspace_id)
            )
        ).scalar_one()
