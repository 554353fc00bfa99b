"""The member install flow: a member lets their agent read their DMs by granting askwith a user token.

`/askwith connect` hands the member an authorize link (`authorize_url`); Slack sends the browser back to the
redirect endpoint with a code, which `complete` exchanges (`oauth.v2.access`) for the member's user token and stores
encrypted. The state parameter is signed, expires, and is good once, so a forged or replayed redirect is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time

from slack_sdk.errors import SlackApiError
from slack_sdk.oauth import AuthorizeUrlGenerator
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import PlatformInstallError
from bot.settings import Settings
from bot.store.deliveries import DeliveryLog
from bot.store.user_tokens import UserTokenGrant, UserTokenStore


# Reading a member's own DMs and group DMs, and listing them.
USER_SCOPES = ("im:history", "mpim:history", "im:read", "mpim:read")
STATE_TTL_SECONDS = 600
# slack_sdk logs request and response bodies at DEBUG: for this exchange, the app's secret, the code and the member's
# token. Its client gets a logger that never logs at DEBUG, whatever level the process runs at.
NO_DEBUG_LOGGER = logging.getLogger("askwith.slack.oauth_exchange")
NO_DEBUG_LOGGER.setLevel(logging.INFO)


class MemberInstallFlow:
    def __init__(
        self,
        settings: Settings,
        client: AsyncWebClient,
        tokens: UserTokenStore,
        *,
        redirect_uri: str | None = None,
        user_scopes: tuple[str, ...] = USER_SCOPES,  # live memory: the search:read.* scopes, and no DM reading
    ) -> None:
        self.client_id = settings.require("slack_client_id")
        self._client_secret = settings.require("slack_client_secret")
        self.client = client
        self.tokens = tokens
        self.redirect_uri = redirect_uri
        self._urls = AuthorizeUrlGenerator(
            client_id=self.client_id, redirect_uri=redirect_uri, scopes=[], user_scopes=list(user_scopes)
        )

    # ------------------------------------------------------------------ state
    def new_state(self, *, now: float | None = None) -> str:
        expires = int((now if now is not None else time.time()) + STATE_TTL_SECONDS)
        payload = f"{secrets.token_urlsafe(12)}.{expires}"
        return f"{payload}.{self._sign(payload)}"

    def check_state(self, state: str, *, now: float | None = None) -> None:
        payload = state.rpartition(".")[0]
        if not self.issued(state):
            raise PlatformInstallError("the link was not issued by this askwith")
        if int(payload.rpartition(".")[2]) < (now if now is not None else time.time()):
            raise PlatformInstallError("the link has expired")

    def issued(self, state: str) -> bool:
        """Whether this flow issued `state` (expired or not); the OAuth redirect serves two flows."""
        payload, _, signature = state.rpartition(".")
        return bool(payload) and hmac.compare_digest(signature, self._sign(payload))

    def _sign(self, payload: str) -> str:
        return hmac.new(self._client_secret.encode(), payload.encode(), hashlib.sha256).hexdigest()[:32]

    # ------------------------------------------------------------------ flow
    def authorize_url(self, team_id: str | None = None) -> str:
        return self._urls.generate(self.new_state(), team=team_id)

    async def complete(self, code: str, state: str) -> UserTokenGrant:
        """Exchange the redirect's code for the member's user token and store it encrypted. A state is good once:
        a replayed redirect is refused even before the state expires."""
        self.check_state(state)
        if not await DeliveryLog(self.tokens.db).first_time("slack", f"oauth_state:{state}"):
            raise PlatformInstallError("the link was already used")
        # Credentials go in the form body, not as HTTP basic auth (slack_sdk builds that with a deprecated aiohttp
        # helper); and on a client without the bot token, so only the app's own credentials are presented.
        anonymous = AsyncWebClient(
            base_url=self.client.base_url, retry_handlers=self.client.retry_handlers, logger=NO_DEBUG_LOGGER
        )
        form = {"client_id": self.client_id, "client_secret": self._client_secret, "code": code}
        if self.redirect_uri:
            form["redirect_uri"] = self.redirect_uri
        try:
            response = await anonymous.api_call("oauth.v2.access", data=form)
        except SlackApiError as exc:
            raise PlatformInstallError(f"Slack refused the authorisation ({exc.response.get('error')})") from exc
        user = response.get("authed_user") or {}
        if not user.get("access_token"):
            raise PlatformInstallError("Slack returned no user token")
        grant = UserTokenGrant(
            platform="slack",
            workspace_external_id=response["team"]["id"],
            member_platform_id=user["id"],
            token=user["access_token"],
            scopes=tuple(s for s in str(user.get("scope", "")).split(",") if s),
        )
        await self.tokens.save(grant)
        return grant
