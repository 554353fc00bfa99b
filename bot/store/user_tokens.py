"""Members' own platform tokens, encrypted at rest.

A Slack bot token sees only the conversations the bot is in; a member's DMs are read with a user token the member
grants through the install flow. Those tokens are stored here, encrypted with the Fernet key from settings
(`ASKWITH_TOKEN_ENCRYPTION_KEY`); the database never holds a token in clear.

    cipher = TokenCipher.from_settings(settings)
    tokens = UserTokenStore(db, cipher)
    await tokens.save(UserTokenGrant("slack", "T1", "U1", "xoxp-…", ("im:history",)))
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import delete, exists, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from bot.errors import InvalidSecretSettingError, StoredTokenError
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database


KEY_ENV = "ASKWITH_TOKEN_ENCRYPTION_KEY"


@dataclass(frozen=True)
class UserTokenGrant:
    platform: str
    workspace_external_id: str
    member_platform_id: str
    token: str
    scopes: tuple[str, ...]


class TokenCipher:
    def __init__(self, key: str) -> None:
        try:
            self._fernet = Fernet(key.encode())
        except ValueError as exc:
            raise InvalidSecretSettingError(KEY_ENV, "Fernet key (32 url-safe base64-encoded bytes)") from exc

    @classmethod
    def from_settings(cls, settings: Settings) -> TokenCipher:
        return cls(settings.require("token_encryption_key"))

    @staticmethod
    def new_key() -> str:
        return Fernet.generate_key().decode()

    def encrypt(self, token: str) -> str:
        return self._fernet.encrypt(token.encode()).decode()

    def decrypt(self, blob: str) -> str:
        try:
            return self._fernet.decrypt(blob.encode()).decode()
        except InvalidToken as exc:
            raise StoredTokenError(
                f"A stored member token cannot be decrypted with the current {KEY_ENV}; the member must reinstall."
            ) from exc


class UserTokenStore:
    def __init__(self, db: Database, cipher: TokenCipher) -> None:
        self.db = db
        self.cipher = cipher

    async def save(self, grant: UserTokenGrant) -> None:
        """Store or replace a member's token."""
        insert = pg_insert if self.db.dialect == "postgresql" else sqlite_insert
        stmt = insert(models.UserToken).values(
            platform=grant.platform,
            workspace_external_id=grant.workspace_external_id,
            member_platform_id=grant.member_platform_id,
            token_encrypted=self.cipher.encrypt(grant.token),
            scopes=",".join(grant.scopes),
            granted_at=datetime.now(UTC),
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["platform", "workspace_external_id", "member_platform_id"],
            set_={
                "token_encrypted": stmt.excluded.token_encrypted,
                "scopes": stmt.excluded.scopes,
                "granted_at": stmt.excluded.granted_at,
            },
        )
        workspace = select(models.Workspace.id).where(
            models.Workspace.platform == grant.platform,
            models.Workspace.external_id == grant.workspace_external_id,
        )
        async with self.db.session() as session, session.begin():
            await session.execute(stmt)
            # A token granted anew is usable again, whatever became of the member's previous one.
            await session.execute(
                delete(models.IngestObject).where(
                    models.IngestObject.workspace_id.in_(workspace),
                    models.IngestObject.kind == "member_token",
                    models.IngestObject.object_id == grant.member_platform_id,
                )
            )

    async def grants(self, platform: str, workspace_external_id: str) -> list[UserTokenGrant]:
        """Every member token of a workspace, decrypted."""
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(models.UserToken)
                    .where(
                        models.UserToken.platform == platform,
                        models.UserToken.workspace_external_id == workspace_external_id,
                    )
                    .order_by(models.UserToken.member_platform_id)
                )
            ).scalars()
            return [
                UserTokenGrant(
                    platform,
                    workspace_external_id,
                    row.member_platform_id,
                    self.cipher.decrypt(row.token_encrypted),
                    tuple(s for s in row.scopes.split(",") if s),
                )
                for row in rows
            ]

    async def usable_grants(self, platform: str, workspace_external_id: str) -> list[UserTokenGrant]:
        """The tokens askwith may read with now: their member is opted in and the token was not disabled (a member
        who opts out stops every read with their token at once)."""
        async with self.db.session() as session:
            usable = set(
                (
                    await session.execute(
                        select(models.Member.platform_id)
                        .join(models.Workspace, models.Workspace.id == models.Member.workspace_id)
                        .where(
                            models.Workspace.platform == platform,
                            models.Workspace.external_id == workspace_external_id,
                            models.Member.opted_in,
                            ~models.Member.deactivated,
                            ~exists().where(
                                models.IngestObject.workspace_id == models.Workspace.id,
                                models.IngestObject.kind == "member_token",
                                models.IngestObject.object_id == models.Member.platform_id,
                                models.IngestObject.status == "disabled",
                            ),
                        )
                    )
                ).scalars()
            )
        return [g for g in await self.grants(platform, workspace_external_id) if g.member_platform_id in usable]

    async def get(self, platform: str, workspace_external_id: str, member_platform_id: str) -> UserTokenGrant | None:
        grants = await self.grants(platform, workspace_external_id)
        return next((g for g in grants if g.member_platform_id == member_platform_id), None)

    async def revoke(self, platform: str, workspace_external_id: str, member_platform_id: str) -> None:
        async with self.db.session() as session, session.begin():
            await session.execute(
                delete(models.UserToken).where(
                    models.UserToken.platform == platform,
                    models.UserToken.workspace_external_id == workspace_external_id,
                    models.UserToken.member_platform_id == member_platform_id,
                )
            )
