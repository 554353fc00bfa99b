"""The store side of keeping memory true to the platform: edits, deletions with tombstones, and who may read what.

Every function works inside the caller's transaction (`memory_ingest.live.LiveMemory` owns the transactions and the
vector index). Functions that drop fuzzy-memory sessions return the dropped sessions' keys, so the caller removes
their vectors; the indexer's next pass re-sessionizes, re-summarizes and re-embeds what is left (a channel whose
sessions were dropped counts as changed).

Messages, channels and members are named by their platform ids within a workspace (database id `workspace_id`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from sqlalchemy import delete, exists, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.platform.port import ChannelKind
from bot.store import bulk, models
from bot.store.db import Database
from bot.store.sanitize import db_text


# ---------------------------------------------------------------------- lookups
async def channel_id(session: AsyncSession, workspace_id: int, channel_platform_id: str) -> int | None:
    return (
        await session.execute(
            select(models.Channel.id).where(
                models.Channel.workspace_id == workspace_id, models.Channel.platform_id == channel_platform_id
            )
        )
    ).scalar_one_or_none()


async def member_id(session: AsyncSession, workspace_id: int, member_platform_id: str) -> int | None:
    return (
        await session.execute(
            select(models.Member.id).where(
                models.Member.workspace_id == workspace_id, models.Member.platform_id == member_platform_id
            )
        )
    ).scalar_one_or_none()


async def opted_in(session: AsyncSession, workspace_id: int, member_platform_ids: Iterable[str]) -> set[str]:
    """Which of these members have opted in (platform ids)."""
    found: set[str] = set()
    for batch in await bulk.chunks(session, sorted(set(member_platform_ids)), per_item=1):
        rows = await session.execute(
            select(models.Member.platform_id).where(
                models.Member.workspace_id == workspace_id,
                models.Member.opted_in.is_(True),
                models.Member.platform_id.in_(batch),
            )
        )
        found.update(rows.scalars())
    return found


async def tombstoned(session: AsyncSession, workspace_id: int, platform_ids: Sequence[str]) -> set[str]:
    """Which of these message ids were deleted on the platform."""
    found: set[str] = set()
    for batch in await bulk.chunks(session, platform_ids, per_item=1):
        rows = await session.execute(
            select(models.MessageTombstone.platform_id).where(
                models.MessageTombstone.workspace_id == workspace_id, models.MessageTombstone.platform_id.in_(batch)
            )
        )
        found.update(rows.scalars())
    return found


# PostgreSQL advisory-lock class ("msgs") taken per workspace: inserts of messages share it, a deletion takes it alone.
MESSAGE_WRITES_LOCK = 0x6D736773


async def lock_message_writes(db: Database, session: AsyncSession, workspace_id: int, *, deleting: bool) -> None:
    """PostgreSQL: a post and its deletion committing at once would each miss the other's uncommitted row (READ
    COMMITTED), so the message comes back; held to the transaction's end. SQLite's writers already run one by one."""
    if db.dialect == "postgresql":
        lock = func.pg_advisory_xact_lock if deleting else func.pg_advisory_xact_lock_shared
        await session.execute(select(lock(MESSAGE_WRITES_LOCK, workspace_id)))


async def drop_tombstoned(session: AsyncSession, workspace_id: int, message_ids: Sequence[int]) -> int:
    """Delete just-inserted messages (database ids) whose deletion was recorded meanwhile; returns how many. The
    tombstone check before an insert is a separate statement: a deletion delivered at once with its post can commit
    its tombstone in between, and finds nothing stored to delete."""
    gone = exists().where(
        models.MessageTombstone.workspace_id == workspace_id,
        models.MessageTombstone.platform_id == models.Message.platform_id,
    )
    dropped = 0
    for batch in await bulk.chunks(session, message_ids, per_item=1):
        result = await session.execute(delete(models.Message).where(models.Message.id.in_(batch), gone))
        dropped += result.rowcount or 0
    return dropped


# ---------------------------------------------------------------------- sessions
async def drop_sessions_of_messages(session: AsyncSession, message_ids: Sequence[int]) -> list[str]:
    """Drop the fuzzy-memory sessions holding any of these messages; returns their keys (vectors to delete)."""
    rows: list[tuple[int, str]] = []
    for batch in await bulk.chunks(session, message_ids, per_item=1):
        result = await session.execute(
            select(models.MemorySession.id, models.MemorySession.key)
            .join(models.SessionMessage, models.SessionMessage.session_id == models.MemorySession.id)
            .where(models.SessionMessage.message_id.in_(batch))
            .distinct()
        )
        rows.extend((id_, key) for id_, key in result.all())
    await delete_sessions(session, [id_ for id_, _ in rows])
    return sorted({key for _, key in rows})


async def drop_sessions_of_channel(session: AsyncSession, channel_db_id: int) -> list[str]:
    rows = (
        await session.execute(
            select(models.MemorySession.id, models.MemorySession.key).where(
                models.MemorySession.channel_id == channel_db_id
            )
        )
    ).all()
    await delete_sessions(session, [id_ for id_, _ in rows])
    return [key for _, key in rows]


async def delete_sessions(session: AsyncSession, session_ids: Sequence[int]) -> None:
    """Delete fuzzy-memory sessions and their message links; their channels' memory versions move on."""
    ids = sorted(set(session_ids))
    await bump_memory_versions(session, ids)
    for batch in await bulk.chunks(session, ids, per_item=1):
        await session.execute(delete(models.SessionMessage).where(models.SessionMessage.session_id.in_(batch)))
        await session.execute(delete(models.MemorySession).where(models.MemorySession.id.in_(batch)))


async def bump_memory_versions(session: AsyncSession, session_ids: Sequence[int]) -> None:
    """Move on the memory version of the channels of these sessions: their vectors were written or are going."""
    for batch in await bulk.chunks(session, session_ids, per_item=1):
        of_sessions = select(models.MemorySession.channel_id).where(models.MemorySession.id.in_(batch))
        await session.execute(
            update(models.Channel)
            .where(models.Channel.id.in_(of_sessions))
            .values(memory_version=models.Channel.memory_version + 1)
        )


async def purge_orphan_summaries(session: AsyncSession) -> int:
    """Delete summaries no session uses any more: an edited or deleted message's old words must not linger there."""
    used = exists().where(models.MemorySession.content_hash == models.SessionSummary.content_hash)
    result = await session.execute(delete(models.SessionSummary).where(~used))
    return int(getattr(result, "rowcount", 0) or 0)


# ---------------------------------------------------------------------- edits and deletions
async def edit_message(
    session: AsyncSession, workspace_id: int, platform_id: str, text: str, *, written_at: datetime | None = None
) -> list[str] | None:
    """Replace a stored message's text with a version written at `written_at` (None: now), unless the stored version
    is as new or newer (an edit or a retried post delivered late never brings back older words). The full-text index
    follows by trigger or generated column and the sessions holding the message are dropped; returns their keys,
    [] when nothing changed, or None when the message is not stored (nothing to edit)."""
    written = _aware(written_at or datetime.now(UTC)).astimezone(UTC)  # SQLite compares its stored UTC text
    clean = db_text(text)
    # The comparison with the stored version and the write are one statement: versions delivered at once (a retry,
    # shuffled edits) each run on separate connections, and a read-then-write let an older one land last (SQLite
    # starts the transaction only at the write, and ignores FOR UPDATE).
    mine = (models.Message.workspace_id == workspace_id, models.Message.platform_id == platform_id)
    older = func.coalesce(models.Message.edited_at, models.Message.ts) < written
    changed = await session.execute(
        update(models.Message)
        .where(*mine, older, models.Message.text != clean)
        .values(text=clean, edited_at=written)
        .returning(models.Message.id)
    )
    if ids := list(changed.scalars()):
        return await drop_sessions_of_messages(session, ids)
    # The same words written later (or an older version): only the edit time may move, no session changes.
    await session.execute(
        update(models.Message).where(*mine, older, models.Message.text == clean).values(edited_at=written)
    )
    stored = await session.execute(select(models.Message.id).where(*mine))
    return [] if stored.first() is not None else None


def _aware(moment: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; they are stored in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def delete_messages(
    db: Database, session: AsyncSession, workspace_id: int, platform_ids: Sequence[str]
) -> tuple[int, list[str]]:
    """Delete messages and leave a tombstone for each (stored or not, so a backfill racing the event cannot bring
    one back). Returns (messages deleted, keys of the sessions dropped)."""
    await lock_message_writes(db, session, workspace_id, deleting=True)
    ids = sorted(set(platform_ids))
    now = datetime.now(UTC)
    for batch in await bulk.chunks(session, ids, per_item=len(models.MessageTombstone.__table__.columns)):
        rows = [{"workspace_id": workspace_id, "platform_id": p, "deleted_at": now} for p in batch]
        stmt = db.insert(models.MessageTombstone).values(rows)
        await session.execute(stmt.on_conflict_do_nothing(index_elements=["workspace_id", "platform_id"]))
    stored: list[int] = []
    for batch in await bulk.chunks(session, ids, per_item=1):
        result = await session.execute(
            select(models.Message.id).where(
                models.Message.workspace_id == workspace_id, models.Message.platform_id.in_(batch)
            )
        )
        stored.extend(result.scalars())
    keys = await drop_sessions_of_messages(session, stored)
    for batch in await bulk.chunks(session, stored, per_item=1):
        await session.execute(delete(models.Message).where(models.Message.id.in_(batch)))
    return len(stored), keys


async def delete_messages_of(
    db: Database, session: AsyncSession, workspace_id: int, member_platform_id: str
) -> tuple[int, list[str]]:
    """Delete every message a member wrote, without tombstones (they still exist on the platform: opting in again
    lets new ones in). Returns (messages deleted, keys of the sessions dropped)."""
    await lock_message_writes(db, session, workspace_id, deleting=True)
    author = await member_id(session, workspace_id, member_platform_id)
    if author is None:
        return 0, []
    theirs = select(models.Message.id).where(
        models.Message.workspace_id == workspace_id, models.Message.sender_id == author
    )
    stored = list((await session.execute(theirs)).scalars())
    keys = await drop_sessions_of_messages(session, stored)
    for batch in await bulk.chunks(session, stored, per_item=1):
        await session.execute(delete(models.Message).where(models.Message.id.in_(batch)))
    return len(stored), keys


# ---------------------------------------------------------------------- readers (visibility)
async def set_readers(
    session: AsyncSession, workspace_id: int, channel_db_id: int, member_platform_ids: Iterable[str]
) -> None:
    """Make a channel's readers exactly these members (deactivated members and unknown ids left out)."""
    wanted = set(member_platform_ids)
    rows = await session.execute(
        select(models.Member.id, models.Member.platform_id).where(
            models.Member.workspace_id == workspace_id, ~models.Member.deactivated
        )
    )
    keep = {id_ for id_, platform_id in rows.all() if platform_id in wanted}
    current = set(
        (
            await session.execute(
                select(models.Membership.member_id).where(models.Membership.channel_id == channel_db_id)
            )
        ).scalars()
    )
    for member in sorted(current - keep):
        await remove_reader(session, channel_db_id, member)
    for member in sorted(keep - current):
        await session.execute(models.Membership.__table__.insert().values(channel_id=channel_db_id, member_id=member))


async def add_reader(db: Database, session: AsyncSession, channel_db_id: int, member_db_id: int) -> None:
    stmt = db.insert(models.Membership).values(channel_id=channel_db_id, member_id=member_db_id)
    await session.execute(stmt.on_conflict_do_nothing())


async def remove_reader(session: AsyncSession, channel_db_id: int, member_db_id: int) -> None:
    await session.execute(
        delete(models.Membership).where(
            models.Membership.channel_id == channel_db_id, models.Membership.member_id == member_db_id
        )
    )


async def forget_readers(session: AsyncSession, channel_db_ids: Sequence[int]) -> None:
    """A channel askwith can no longer verify (the bot left, the token reading it is gone): nobody reads it."""
    for batch in await bulk.chunks(session, sorted(set(channel_db_ids)), per_item=1):
        await session.execute(delete(models.Membership).where(models.Membership.channel_id.in_(batch)))


async def forget_unlisted_channels(
    session: AsyncSession, workspace_id: int, listed_db_ids: Iterable[int], *, dms_too: bool = False
) -> int:
    """Channels the platform no longer lists to askwith (the bot left them) keep no readers; returns how many lost
    them. DMs and group DMs are left alone unless `dms_too`: they are listed through members' own tokens, and a
    token not used now (memory off, a process without the token key) says nothing about who may read them (a
    revoked token takes its DMs' readers away itself)."""
    listed = set(listed_db_ids)
    kinds = [ChannelKind.PUBLIC.value, ChannelKind.PRIVATE.value]
    if dms_too:
        kinds += [ChannelKind.DM.value, ChannelKind.GROUP_DM.value]
    with_readers = set(
        (
            await session.execute(
                select(models.Membership.channel_id)
                .join(models.Channel, models.Channel.id == models.Membership.channel_id)
                .where(models.Channel.workspace_id == workspace_id, models.Channel.kind.in_(kinds))
                .distinct()
            )
        ).scalars()
    )
    unverified = sorted(with_readers - listed)
    await forget_readers(session, unverified)
    return len(unverified)


async def delete_channel(session: AsyncSession, channel_db_id: int) -> list[str]:
    """A channel deleted on the platform: its messages, sessions, cursors and readers go (cascade); returns the
    dropped sessions' keys."""
    keys = await drop_sessions_of_channel(session, channel_db_id)
    await session.execute(delete(models.Message).where(models.Message.channel_id == channel_db_id))
    await session.execute(delete(models.Channel).where(models.Channel.id == channel_db_id))
    return keys


async def set_channel_kind(session: AsyncSession, channel_db_id: int, kind: ChannelKind) -> None:
    await session.execute(update(models.Channel).where(models.Channel.id == channel_db_id).values(kind=kind.value))


async def set_deactivated(session: AsyncSession, member_db_id: int, deactivated: bool) -> None:
    """A deactivated member reads nothing any more (their memberships go); reactivation waits for the next mirror to
    say which channels they are in again."""
    await session.execute(
        update(models.Member).where(models.Member.id == member_db_id).values(deactivated=deactivated)
    )
    if deactivated:
        await session.execute(delete(models.Membership).where(models.Membership.member_id == member_db_id))


async def token_only_channels(
    session: AsyncSession, workspace_id: int, member_platform_id: str, *, other_readers: Iterable[str]
) -> list[int]:
    """DMs and group DMs askwith holds only through this member: the member is party to them and nobody in
    `other_readers` (the bot, members whose own tokens also read them) is."""
    others = set(other_readers)
    party = (
        select(models.Membership.channel_id)
        .join(models.Member, models.Member.id == models.Membership.member_id)
        .where(models.Member.workspace_id == workspace_id, models.Member.platform_id == member_platform_id)
    )
    rows = await session.execute(
        select(models.Channel.id).where(
            models.Channel.id.in_(party), models.Channel.kind.in_([ChannelKind.DM.value, ChannelKind.GROUP_DM.value])
        )
    )
    candidates = list(rows.scalars())
    if not candidates or not others:
        return sorted(candidates)
    shared = await session.execute(
        select(models.Membership.channel_id)
        .join(models.Member, models.Member.id == models.Membership.member_id)
        .where(models.Membership.channel_id.in_(candidates), models.Member.platform_id.in_(sorted(others)))
    )
    return sorted(set(candidates) - set(shared.scalars()))
