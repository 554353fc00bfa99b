"""The workspaces that installed the Slack app (`slack_installation`), one row per (enterprise, team): saved or
replaced on (re)install, found, deleted, listed. Tokens arrive here encrypted; the Slack adapter's installation
store (`adapters.slack.installations`) encrypts and decrypts them.

    await save_installation(db, {"enterprise_id": "", "team_id": "T1", "bot_token_encrypted": "...", ...})
    row = await find_installation(db, enterprise_id="", team_id="T1")      # None when not installed
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import delete, select

from bot.store import models
from bot.store.db import Database


async def save_installation(db: Database, values: Mapping[str, object]) -> None:
    """Store the row, or replace every column of the one with the same (enterprise_id, team_id)."""
    stmt = db.insert(models.SlackInstallation).values(**values)
    stmt = stmt.on_conflict_do_update(
        index_elements=["enterprise_id", "team_id"],
        set_={k: stmt.excluded[k] for k in values if k not in ("enterprise_id", "team_id")},
    )
    async with db.session() as session, session.begin():
        await session.execute(stmt)


async def find_installation(db: Database, *, enterprise_id: str, team_id: str) -> models.SlackInstallation | None:
    async with db.session() as session:
        return (
            await session.execute(
                select(models.SlackInstallation).where(
                    models.SlackInstallation.enterprise_id == enterprise_id,
                    models.SlackInstallation.team_id == team_id,
                )
            )
        ).scalar_one_or_none()


async def delete_installation(db: Database, *, enterprise_id: str, team_id: str) -> None:
    async with db.session() as session, session.begin():
        await session.execute(
            delete(models.SlackInstallation).where(
                models.SlackInstallation.enterprise_id == enterprise_id,
                models.SlackInstallation.team_id == team_id,
            )
        )


async def all_installations(db: Database) -> Sequence[models.SlackInstallation]:
    async with db.session() as session:
        return (await session.execute(select(models.SlackInstallation))).scalars().all()
