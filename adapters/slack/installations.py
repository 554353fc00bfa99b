"""Where bolt's OAuth flow keeps the workspaces that installed askwith: slack_sdk's `AsyncInstallationStore` over
the project's database (table `slack_installation`), each bot token encrypted with the same key as members' tokens;
and a single-use OAuth state store.

    store = EncryptedInstallationStore(db, TokenCipher.from_settings(settings))
    settings = AsyncOAuthSettings(..., installation_store=store, state_store=SingleUseStateStore(secret, db))

One bot per workspace is kept (bolt runs with `installation_store_bot_only`): members' own tokens have their own
flow (`/askwith connect`) and store.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from itsdangerous import BadSignature, TimestampSigner
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from bot.store import models
from bot.store.db import Database
from bot.store.deliveries import DeliveryLog
from bot.store.slack_installations import (
    all_installations,
    delete_installation,
    find_installation,
    save_installation,
)
from bot.store.user_tokens import TokenCipher


STATE_TTL_SECONDS = 600


class EncryptedInstallationStore(AsyncInstallationStore):
    def __init__(self, db: Database, cipher: TokenCipher) -> None:
        self.db = db
        self.cipher = cipher

    async def async_save(self, installation: Installation) -> None:
        await self.async_save_bot(installation.to_bot())

    async def async_save_bot(self, bot: Bot) -> None:
        """Store or replace the workspace's bot (a reinstall brings a new token and maybe new scopes)."""
        values = {
            "enterprise_id": bot.enterprise_id or "",
            "team_id": bot.team_id or "",
            "team_name": bot.team_name or "",
            "app_id": bot.app_id or "",
            "bot_id": bot.bot_id,
            "bot_user_id": bot.bot_user_id,
            "bot_token_encrypted": self.cipher.encrypt(bot.bot_token),
            "bot_scopes": ",".join(bot.bot_scopes),
            "installer_user_id": "",
            "installed_at": datetime.now(UTC),
        }
        await save_installation(self.db, values)

    async def async_find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        row = await find_installation(self.db, enterprise_id=enterprise_id or "", team_id=team_id or "")
        return None if row is None else self._bot(row)

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        if user_id is not None:
            return None  # members' tokens are not kept here
        bot = await self.async_find_bot(enterprise_id=enterprise_id, team_id=team_id)
        if bot is None:
            return None
        return Installation(
            app_id=bot.app_id, enterprise_id=bot.enterprise_id, team_id=bot.team_id, team_name=bot.team_name,
            bot_token=bot.bot_token, bot_id=bot.bot_id, bot_user_id=bot.bot_user_id, bot_scopes=bot.bot_scopes,
            user_id="", installed_at=bot.installed_at,
        )  # fmt: skip

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await delete_installation(self.db, enterprise_id=enterprise_id or "", team_id=team_id or "")

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is None:
            await self.async_delete_bot(enterprise_id=enterprise_id, team_id=team_id)

    async def bots(self) -> list[Bot]:
        """Every installed workspace's bot, for start-up."""
        return [self._bot(row) for row in await all_installations(self.db)]

    def _bot(self, row: models.SlackInstallation) -> Bot:
        return Bot(
            app_id=row.app_id or None, enterprise_id=row.enterprise_id or None, team_id=row.team_id,
            team_name=row.team_name, bot_token=self.cipher.decrypt(row.bot_token_encrypted), bot_id=row.bot_id,
            bot_user_id=row.bot_user_id, bot_scopes=[s for s in row.bot_scopes.split(",") if s],
            installed_at=row.installed_at,
        )  # fmt: skip


class SingleUseStateStore(AsyncOAuthStateStore):
    """OAuth states signed with the app's secret, expiring, and good once (recorded in the delivery log), so a forged,
    stale or replayed redirect is refused."""

    def __init__(self, secret: str, db: Database, *, ttl_seconds: int = STATE_TTL_SECONDS) -> None:
        self._signer = TimestampSigner(secret, salt="askwith.slack.install")
        self.db = db
        self.ttl_seconds = ttl_seconds

    async def async_issue(self, *args: object, **kwargs: object) -> str:
        return self._signer.sign(secrets.token_urlsafe(16)).decode()

    async def async_consume(self, state: str) -> bool:
        try:
            self._signer.unsign(state, max_age=self.ttl_seconds)
        except BadSignature:
            return False
        return await DeliveryLog(self.db).first_time("slack", f"install_state:{state}")
