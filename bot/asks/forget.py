"""Deleting everything askwith holds for a workspace, in one place: when it leaves (the Slack app uninstalled or its
tokens revoked, the Discord bot removed from a server) and from the CLI (`askwith forget --workspace W`).

The tables are found from the models, not listed by hand: a table with a `workspace_id` column is scoped by it, a
table with a foreign key to a scoped table by that key (recursively), and the few tables keyed otherwise are named in
`KEYED_ELSEWHERE` / `NOT_WORKSPACE_DATA`. A table in none of these makes `workspace_tables` raise, so a new table
cannot be forgotten silently (a unit test imports every model and calls it).

A member's `/askwith forget` (Slack and Discord) deletes that member's part the same way: `forget_member`.

    deleted = await forget_workspace(db, workspace_id, indexes=[index, index.windows()])
    deleted = await forget_member(db, workspace_id, "U0123", other_readers={bot_id}, vectors=indexer)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Protocol

from sqlalchemy import ColumnElement, String, Table, and_, cast, delete, exists, func, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.asks import models as ask_models  # noqa: F401 - registers the asks' tables
from bot.errors import UnscopedTableError
from bot.store import (
    lease_models,  # noqa: F401 - registers the lease table (holding no workspace data)
    models,
    negotiation_models,
    truth,
)
from bot.store.db import Database


logger = logging.getLogger(__name__)

# Tables whose rows belong to a workspace without a key to its row: (column of the platform, of the external id).
KEYED_ELSEWHERE = {
    "user_token": ("platform", "workspace_external_id"),
    "slack_installation": (None, "team_id"),
}
# Tables that hold nothing of any workspace (why, briefly). `session_summary` is a cache of summaries by content
# hash: a summary no remaining session uses is deleted after the sessions go (`_orphan_summaries`).
NOT_WORKSPACE_DATA = {
    "inbound_delivery": "ids of platform deliveries already handled (no content), expire on their own",
    "rate_slot": "when each platform method may next be called in a workspace (no content); one row per method",
    "session_summary": "summaries by content hash; the ones no session uses any more are deleted",
    "sync_lease": "which process leads a workspace's scheduled sync (no content); expires on its own",
    "workspace": "the workspace's own row, deleted last",
}
ASK_TABLES = frozenset({"ask", "conversation", "turn", "memory_query", "llm_call", "consensus", "approval",
                        "ask_feedback"})  # fmt: skip


class WorkspaceVectors(Protocol):
    async def drop_workspace(self, workspace_id: int) -> None: ...


def workspace_tables() -> list[Table]:
    """Every table holding workspace data, children before parents (the order rows can be deleted in)."""
    tables = [t for t in models.Base.metadata.sorted_tables if t.name not in NOT_WORKSPACE_DATA]
    for table in tables:
        if table.name not in KEYED_ELSEWHERE and _parent_key(table) is None and "workspace_id" not in table.c:
            raise UnscopedTableError(table.name)
    return list(reversed(tables))


def _parent_key(table: Table) -> tuple[ColumnElement, Table] | None:
    """The first foreign key of `table` to a table that is itself tied to a workspace."""
    for column in table.columns:
        for key in column.foreign_keys:
            parent = key.column.table
            if parent is not table and parent.name != "workspace" and _scoped(parent):
                return column, parent
    return None


def _scoped(table: Table) -> bool:
    return "workspace_id" in table.c or _parent_key(table) is not None


def _rows_of(table: Table, workspace_id: int) -> ColumnElement[bool]:
    """Which rows of `table` belong to the workspace."""
    if "workspace_id" in table.c:
        return table.c.workspace_id == workspace_id
    found = _parent_key(table)
    if found is None:
        raise UnscopedTableError(table.name)
    column, parent = found
    target = next(iter(column.foreign_keys)).column
    return column.in_(select(target).where(_rows_of(parent, workspace_id)))


async def forget_workspace(
    db: Database,
    workspace_id: int,
    *,
    indexes: Sequence[WorkspaceVectors] = (),
    keep_asks: bool = False,
) -> dict[str, int]:
    """Delete every row and vector of the workspace; `keep_asks` keeps its asks and transcripts (and the workspace's
    row they hang on). Returns rows deleted per table."""
    async with db.session() as session:
        row = await session.get(models.Workspace, workspace_id)
        key = (row.platform, row.external_id) if row is not None else None
    deleted: dict[str, int] = {}
    async with db.session() as session, session.begin():
        trades = delete(ask_models.Approval).where(_trade_approvals(workspace_id))  # before their negotiations go
        trade_approvals = int((await session.execute(trades)).rowcount or 0)
        for table in workspace_tables():
            if keep_asks and table.name in ASK_TABLES:
                continue
            where = _rows_of_keyed(table, key) if table.name in KEYED_ELSEWHERE else _rows_of(table, workspace_id)
            if where is not None:
                deleted[table.name] = (await session.execute(delete(table).where(where))).rowcount or 0
        deleted["approval"] = deleted.get("approval", 0) + trade_approvals
        deleted["session_summary"] = await _orphan_summaries(session)
        if not keep_asks:
            await session.execute(delete(models.Workspace).where(models.Workspace.id == workspace_id))
    for index in indexes:
        await index.drop_workspace(workspace_id)
    logger.warning("Workspace %s: everything askwith held is deleted (%d rows)", workspace_id, sum(deleted.values()))
    return deleted


def _trade_approvals(workspace_id: int) -> ColumnElement[bool]:
    """Approval rows of the workspace's negotiations (no ask, so no key to follow): their id is
    `negotiation-<id>-<handle>` (`bot.negotiation.confirmation`). Only a process that stopped while a trade waited
    leaves any: a finished trade deletes its own."""
    negotiation = negotiation_models.Negotiation
    of_negotiation = ask_models.Approval.id.like(
        literal("negotiation-") + cast(negotiation.id, String) + literal("-%")
    )
    return ask_models.Approval.ask_id.is_(None) & exists().where(
        negotiation.workspace_id == workspace_id, of_negotiation
    )


def _rows_of_keyed(table: Table, key: tuple[str, str] | None) -> ColumnElement[bool] | None:
    if key is None:
        return None
    platform_column, external_column = KEYED_ELSEWHERE[table.name]
    if platform_column is None:
        return table.c[external_column] == key[1] if key[0] == "slack" else None
    return and_(table.c[platform_column] == key[0], table.c[external_column] == key[1])


async def _orphan_summaries(session: AsyncSession) -> int:
    used = exists().where(models.MemorySession.content_hash == models.SessionSummary.content_hash)
    result = await session.execute(delete(models.SessionSummary).where(~used))
    return int(result.rowcount or 0)


async def workspace_id_of(db: Database, platform: str, external_id: str) -> int | None:
    async with db.session() as session:
        query = select(models.Workspace.id).where(
            models.Workspace.platform == platform, models.Workspace.external_id == external_id
        )
        return await session.scalar(query)


async def workspaces_of(db: Database, platform: str) -> dict[str, int]:
    """Every stored workspace of a platform: external id -> workspace id."""
    async with db.session() as session:
        rows = await session.execute(
            select(models.Workspace.external_id, models.Workspace.id).where(models.Workspace.platform == platform)
        )
        return {external_id: workspace_id for external_id, workspace_id in rows.all()}


async def count_workspace_rows(db: Database, workspace_id: int, key: tuple[str, str]) -> dict[str, int]:
    """Rows each workspace table holds for the workspace (tests and `askwith forget --dry-run` count with this)."""
    counts: dict[str, int] = {}
    async with db.session() as session:
        for table in workspace_tables():
            where = _rows_of_keyed(table, key) if table.name in KEYED_ELSEWHERE else _rows_of(table, workspace_id)
            if where is not None:
                counts[table.name] = int(await session.scalar(select(func.count()).select_from(table).where(where)))
        trades = select(func.count()).select_from(ask_models.Approval).where(_trade_approvals(workspace_id))
        counts["approval"] = counts.get("approval", 0) + int(await session.scalar(trades))
        workspace = select(func.count()).select_from(models.Workspace).where(models.Workspace.id == workspace_id)
        counts["workspace"] = int(await session.scalar(workspace))
    return counts


class SessionVectors(Protocol):
    async def drop_vectors(self, workspace_id: int, session_keys: list[str]) -> None: ...


async def forget_member(
    db: Database,
    workspace_id: int,
    member_platform_id: str,
    *,
    other_readers: Iterable[str] = (),
    vectors: SessionVectors | None = None,
) -> dict[str, int]:
    """A member's `/askwith forget`: their user and action tokens, their opt-in (now off) and channel exclusions,
    every conversation only they could see (no other opted-in member reads it, or, a DM or group DM, it was read only
    with their token: `other_readers` are the bot and members whose own tokens read too) with its messages, sessions
    and vectors, the asks they made with their transcripts, and what their agent shared in others' asks (its turns,
    with their queries and calls) with the sharing decisions they made. Other members' memory, asks and turns stay.
    Returns rows deleted per kind."""
    async with db.session() as session:
        workspace = await session.get(models.Workspace, workspace_id)
        member = await session.scalar(
            select(models.Member).where(
                models.Member.workspace_id == workspace_id, models.Member.platform_id == member_platform_id
            )
        )
        only_theirs = await _channels_only_of(session, workspace_id, member.id) if member is not None else set()
        only_theirs |= set(
            await truth.token_only_channels(session, workspace_id, member_platform_id, other_readers=other_readers)
        )
    deleted: dict[str, int] = {"channel": len(only_theirs)}
    keys: list[str] = []
    async with db.session() as session, session.begin():
        messages = select(func.count()).select_from(models.Message)
        deleted["message"] = int(await session.scalar(messages.where(models.Message.channel_id.in_(only_theirs))))
        for channel in sorted(only_theirs):
            keys.extend(await truth.delete_channel(session, channel))
        deleted["memory_session"] = len(keys)
        deleted["session_summary"] = await _orphan_summaries(session)
        if workspace is not None:
            tokens = (models.UserToken.platform == workspace.platform) & (
                models.UserToken.workspace_external_id == workspace.external_id
            )
            found = delete(models.UserToken).where(tokens, models.UserToken.member_platform_id == member_platform_id)
            deleted["user_token"] = int((await session.execute(found)).rowcount or 0)
        action = models.ActionToken
        granted = delete(action).where(
            action.workspace_id == workspace_id, action.member_platform_id == member_platform_id
        )
        deleted["action_token"] = int((await session.execute(granted)).rowcount or 0)
        deleted["approval"] = await _delete_decisions_of(session, workspace_id, member_platform_id)
        if member is not None:
            deleted["ask"] = await _delete_asks_of(session, workspace_id, member.name)
            deleted["turn"] = await _delete_shares_of(session, workspace_id, member.name)
            excluded = delete(models.MemberExclusion).where(models.MemberExclusion.member_id == member.id)
            deleted["member_exclusion"] = int((await session.execute(excluded)).rowcount or 0)
            opt_out = update(models.Member).where(models.Member.id == member.id).values(opted_in=False)
            await session.execute(opt_out)
    if keys and vectors is not None:
        await vectors.drop_vectors(workspace_id, keys)
    logger.warning("Workspace %s: member %s's memory is deleted (%s)", workspace_id, member_platform_id, deleted)
    return deleted


async def _channels_only_of(session: AsyncSession, workspace_id: int, member_db_id: int) -> set[int]:
    """The member's channels that no other opted-in, active, human member reads."""
    theirs = select(models.Membership.channel_id).where(models.Membership.member_id == member_db_id)
    others = (
        select(models.Membership.channel_id)
        .join(models.Member, models.Member.id == models.Membership.member_id)
        .where(
            models.Member.workspace_id == workspace_id,
            models.Member.id != member_db_id,
            models.Member.opted_in.is_(True),
            models.Member.is_bot.is_(False),
            models.Member.deactivated.is_(False),
            models.Membership.channel_id.in_(theirs),
        )
    )
    return set((await session.execute(theirs)).scalars()) - set((await session.execute(others)).scalars())


async def _delete_asks_of(session: AsyncSession, workspace_id: int, handle: str) -> int:
    """The asks the member made; their conversations, turns, queries, calls, approvals and votes go with them
    (foreign keys cascade)."""
    asks = delete(ask_models.Ask).where(
        ask_models.Ask.workspace_id == workspace_id, ask_models.Ask.requester == handle
    )
    return int((await session.execute(asks)).rowcount or 0)


async def _delete_shares_of(session: AsyncSession, workspace_id: int, handle: str) -> int:
    """The turns the member's agent took in other members' asks (what it said and the lines it passed on); their
    memory queries and model calls go with them (foreign keys cascade)."""
    asks = select(ask_models.Ask.id).where(ask_models.Ask.workspace_id == workspace_id)
    conversations = select(ask_models.Conversation.id).where(ask_models.Conversation.ask_id.in_(asks))
    turns = delete(ask_models.Turn).where(
        ask_models.Turn.agent == handle, ask_models.Turn.conversation_id.in_(conversations)
    )
    return int((await session.execute(turns)).rowcount or 0)


async def _delete_decisions_of(session: AsyncSession, workspace_id: int, member_platform_id: str) -> int:
    """The member's approvals of what their agent would share, in the workspace's asks."""
    asks = select(ask_models.Ask.id).where(ask_models.Ask.workspace_id == workspace_id)
    decided = delete(ask_models.Approval).where(
        ask_models.Approval.member_id == member_platform_id, ask_models.Approval.ask_id.in_(asks)
    )
    return int((await session.execute(decided)).rowcount or 0)
