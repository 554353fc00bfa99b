"""A Slack workspace leaving askwith (`app_uninstalled`, or `tokens_revoked` taking the bot's token): its scheduled
ingestion and ask worker stop at once, work it started in this process is cancelled, its installation goes (OAuth),
and everything askwith holds for it is deleted (`bot.asks.forget`: messages, tombstones, sessions, summaries,
vectors, members' tokens, asks and transcripts).

A team whose services are not open in this process (its bot token already dead, so it cannot be reopened) leaves by
its team id alone, asking Slack nothing:

    await team_left(db, "T0123", indexes=indexes_of(indexer))
"""

from __future__ import annotations

import asyncio
import logging

from adapters.slack.services import SlackServices
from bot.asks.forget import WorkspaceVectors, forget_workspace, workspace_id_of
from bot.memory.indexer import SessionIndexer
from bot.store.db import Database


logger = logging.getLogger(__name__)


async def workspace_left(svc: SlackServices) -> dict[str, int]:
    if svc.left is not None:
        svc.left()  # the process stops its schedule and ask worker for the workspace
    _cancel_other_work(svc)
    if svc.uninstall is not None:
        await svc.uninstall()  # OAuth: the installation is deleted and the team's services closed
    workspace_id = await _workspace_id(svc)
    if workspace_id is None:
        return {}
    return await forget_workspace(svc.db, workspace_id, indexes=indexes_of(svc.ingest.indexer if svc.ingest else None))


async def team_left(db: Database, team_id: str, *, indexes: list[WorkspaceVectors]) -> dict[str, int]:
    """Everything askwith holds for the team, found by its id in the store (no call to Slack)."""
    workspace_id = await workspace_id_of(db, "slack", team_id)
    if workspace_id is None:
        return {}
    return await forget_workspace(db, workspace_id, indexes=indexes)


def _cancel_other_work(svc: SlackServices) -> None:
    """Asks and events of the workspace still running here: stopped (this task, doing the leaving, is left alone)."""
    current = asyncio.current_task()
    for task in list(svc.tasks):
        if task is not current:
            task.cancel()


async def _workspace_id(svc: SlackServices) -> int | None:
    if svc.asks is not None:
        return svc.asks.workspace_id
    if svc.ingest is not None and svc.ingest.workspace_id is not None:
        return svc.ingest.workspace_id
    return await workspace_id_of(svc.db, "slack", (await svc.port.identity()).team_id)


def indexes_of(indexer: SessionIndexer | None) -> list[WorkspaceVectors]:
    """The vector indexes a workspace's sessions live in (none without an indexer)."""
    if indexer is None:
        return []
    return [indexer.index, indexer.index.windows()]
