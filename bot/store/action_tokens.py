"""Platform action tokens in the database, encrypted at rest and expiring, so whichever process runs an ask finds the
token of the message that started it: the process that received the event, an ask worker that claimed the ask, or
the one that resumed it after a restart.

A Slack `action_token` comes with the event a member's message raised and lets the bot search as that member for a
short while. One is kept per workspace and member (a newer message's token replaces the older), encrypted with the
same key as members' own tokens (`bot.store.user_tokens.TokenCipher`), for `keep_s`; expired rows are swept when a
new token is stored. A workspace askwith does not hold (no `workspace` row) keeps none; forgetting a workspace
deletes its tokens with it.

    store = ActionTokenStore(db, cipher, platform="slack", workspace_external_id="T1", keep_s=900)
    await store.remember("UALICE", event["action_token"])
    await store.get("UALICE")        # the token, or None when none is kept or it expired
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import ScalarSelect, delete, literal, select

from bot.errors import StoredTokenError
from bot.store import models
from bot.store.db import Database, as_utc
from bot.store.user_tokens import TokenCipher


class ActionTokenStore:
    def __init__(
        self,
        db: Database,
        cipher: TokenCipher,
        *,
        platform: str,
        workspace_external_id: str,
        keep_s: float,
        clock: Callable[[], float] = time.time,  # wall-clock seconds: the rows are compared across processes
    ) -> None:
        self.db = db
        self.cipher = cipher
        self.platform = platform
        self.workspace_external_id = workspace_external_id
        self.keep_s = keep_s
        self.clock = clock

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def _workspace(self) -> ScalarSelect[int]:
        return (
            select(models.Workspace.id)
            .where(
                models.Workspace.platform == self.platform,
                models.Workspace.external_id == self.workspace_external_id,
            )
            .scalar_subquery()
        )

    async def remember(self, member_platform_id: str, token: str) -> None:
        now = self._now()
        row = select(
            models.Workspace.id,
            literal(member_platform_id),
            literal(self.cipher.encrypt(token)),
            literal(now + timedelta(seconds=self.keep_s), models.ActionToken.expires_at.type),
        ).where(models.Workspace.id == self._workspace())
        columns = ["workspace_id", "member_platform_id", "token_encrypted", "expires_at"]
        stmt = self.db.insert(models.ActionToken).from_select(columns, row)
        stmt = stmt.on_conflict_do_update(
            index_elements=["workspace_id", "member_platform_id"],
            set_={"token_encrypted": stmt.excluded.token_encrypted, "expires_at": stmt.excluded.expires_at},
        )
        async with self.db.session() as session, session.begin():
            await session.execute(stmt)
            await session.execute(delete(models.ActionToken).where(models.ActionToken.expires_at < now))

    async def get(self, member_platform_id: str) -> str | None:
        stmt = select(models.ActionToken.token_encrypted, models.ActionToken.expires_at).where(
            models.ActionToken.workspace_id == self._workspace(),
            models.ActionToken.member_platform_id == member_platform_id,
        )
        async with self.db.session() as session:
            row = (await session.execute(stmt)).one_or_none()
        if row is None or as_utc(row.expires_at) <= self._now():
            return None
        try:
            return self.cipher.decrypt(row.token_encrypted)
        except StoredTokenError:  # stored under a key since rotated: the member's next message brings a new one
            return None
