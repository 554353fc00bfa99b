"""Many Slack workspaces in one process: each installed workspace gets its own `SlackServices` (its own bot token,
`SlackPort`, ingestion and `AskService`), opened when it installs askwith and, at start-up, for every workspace in
the installation store; a request reaches the services of the team it came from (bolt's `authorize` already found
that team's installation), so nothing of one workspace is ever read or written with another's token or scope.

    workspaces = SlackWorkspaces(store, open_workspace)
    await workspaces.open_installed()            # start-up
    svc = await workspaces.for_team(team_id)     # None when the team has not installed askwith

A team whose bot token Slack refuses as dead (`invalid_auth`, `token_revoked`, `account_inactive`) at start-up has
left askwith while no process was listening, and one whose `app_uninstalled` (or bot `tokens_revoked`) arrives while
its services are not open here is not reopened with a token that no longer works: either way its installation and
everything askwith holds for it are deleted by team id, without a call to Slack (`adapters.slack.leaving.team_left`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.oauth.installation_store import Bot

from adapters.slack.installations import EncryptedInstallationStore
from adapters.slack.services import CONTEXT_KEY, SlackServices
from bot.errors import PlatformTokenRevokedError


logger = logging.getLogger(__name__)

OpenWorkspace = Callable[[Bot], Awaitable[SlackServices]]
ForgetTeam = Callable[[str], Awaitable[object]]  # deletes what askwith holds for a team id, asking Slack nothing
# Slack's answers for a bot token that no longer works: the app was uninstalled or its token revoked.
DEAD_TOKEN = frozenset({"invalid_auth", "token_revoked", "account_inactive"})


class SlackWorkspaces:
    def __init__(
        self, store: EncryptedInstallationStore, open_workspace: OpenWorkspace, forget_team: ForgetTeam | None = None
    ) -> None:
        self.store = store
        self._open = open_workspace
        self._forget_team = forget_team
        self._by_team: dict[str, SlackServices] = {}
        self._lock = asyncio.Lock()  # two first requests of a team open its services once

    @property
    def teams(self) -> list[str]:
        return sorted(self._by_team)

    def all(self) -> list[SlackServices]:
        """Every open workspace's services, in the order of `teams`."""
        return [self._by_team[team] for team in self.teams]

    async def open_installed(self) -> list[SlackServices]:
        """Open every workspace of the installation store (start-up)."""
        for bot in await self.store.bots():
            try:
                await self.open(bot)
            except PlatformTokenRevokedError as exc:
                if exc.token_owner is not None or exc.reason not in DEAD_TOKEN:
                    logger.exception("could not open Slack workspace %s; it opens on its next request", bot.team_id)
                    continue
                said = "Slack refuses workspace %s's bot token (%s): askwith was removed while stopped; its data goes"
                logger.warning(said, bot.team_id, exc.reason)
                await self.left_unopened(bot.enterprise_id, bot.team_id or "")
            except Exception:  # noqa: BLE001 - one workspace that cannot be reached must not keep the rest down
                logger.exception("could not open Slack workspace %s; it opens on its next request", bot.team_id)
        return self.all()

    async def open(self, bot: Bot) -> SlackServices:
        """The team's services, opened with this bot (a reinstall with a new token reopens them)."""
        team = bot.team_id or ""
        async with self._lock:
            current = self._by_team.get(team)
            if current is not None and current.port.client.token == bot.bot_token:
                return current
            svc = await self._open(bot)
            svc.uninstall = lambda: self.uninstall(bot.enterprise_id, team)
            self._by_team[team] = svc
        if current is not None:
            await current.drain()
        return svc

    async def for_team(self, team_id: str | None, enterprise_id: str | None = None) -> SlackServices | None:
        if not team_id:
            return None
        svc = self._by_team.get(team_id)
        if svc is not None:
            return svc
        bot = await self.store.async_find_bot(enterprise_id=enterprise_id, team_id=team_id)
        return None if bot is None else await self.open(bot)

    async def uninstall(self, enterprise_id: str | None, team_id: str) -> None:
        """The team removed askwith (or revoked its bot token): its installation is deleted and its services closed."""
        await self.store.async_delete_all(enterprise_id=enterprise_id, team_id=team_id)
        # Not drained here: this runs as one of that team's own background tasks.
        self._by_team.pop(team_id, None)
        logger.warning("askwith was removed from Slack workspace %s; its installation is deleted", team_id)

    def is_open(self, team_id: str | None) -> bool:
        return bool(team_id) and team_id in self._by_team

    async def left_unopened(self, enterprise_id: str | None, team_id: str) -> None:
        """A team that left while its services are not open here: its installation and its data are deleted by team
        id (its token may be dead: nothing is asked of Slack)."""
        await self.uninstall(enterprise_id, team_id)
        if self._forget_team is not None:
            await self._forget_team(team_id)

    async def drain(self) -> None:
        for svc in self.all():
            await svc.drain()


class AsyncInjectingTeamServices(AsyncMiddleware):
    """Hand the listeners the services of the team the request came from."""

    def __init__(self, workspaces: SlackWorkspaces) -> None:
        self.workspaces = workspaces

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        team, enterprise = req.context.team_id, req.context.enterprise_id
        if team and _leaves(req.body) and not self.workspaces.is_open(team):
            await self.workspaces.left_unopened(enterprise, team)  # never reopened with a token that no longer works
            return BoltResponse(status=200, body="")
        svc = await self.workspaces.for_team(team, enterprise)
        if svc is None:  # bolt authorized it, so only a team uninstalled in between
            return BoltResponse(status=200, body="")
        req.context[CONTEXT_KEY] = svc
        return await next()


def _leaves(body: dict[str, Any]) -> bool:
    """An event saying the team removed askwith: `app_uninstalled`, or `tokens_revoked` naming the bot's token."""
    event = (body.get("event") or {}) if isinstance(body, dict) else {}
    if event.get("type") == "app_uninstalled":
        return True
    return event.get("type") == "tokens_revoked" and bool((event.get("tokens") or {}).get("bot"))
