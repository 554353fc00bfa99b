"""Slack as `askwith serve` hosts it: enabled by SLACK_BOT_TOKEN; HTTP endpoint mounted at /slack (Slack's request
URL is `<public url>/slack/events`), or Socket Mode when SLACK_APP_TOKEN is set.

Slack's libraries are imported inside `start`, so registering the starter costs nothing when Slack is not used.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.errors import InvalidSecretSettingError, InvalidSettingError
from bot.memory.live import slack_app_kind
from bot.platform.runtime import PlatformContext, PlatformRuntime, PlatformStarter
from bot.settings import Settings


MOUNT_PATH = "/slack"


def _enabled(settings: Settings) -> bool:
    return bool(settings.slack_bot_token) or _many_workspaces(settings)


def _many_workspaces(settings: Settings) -> bool:
    """Only the explicit setting switches to OAuth installs: SLACK_CLIENT_ID alone serves the member install flow."""
    if settings.slack_distribution not in ("single", "oauth"):
        raise InvalidSettingError("ASKWITH_SLACK_DISTRIBUTION", settings.slack_distribution, "choice (single|oauth)")
    return settings.slack_distribution == "oauth"


def refuse_socket_mode_in_the_marketplace(settings: Settings) -> None:
    """ "Apps using Socket Mode are not currently allowed in the public Slack Marketplace": a Marketplace app receives
    Slack's requests at its HTTP request URL, so SLACK_APP_TOKEN set beside it is a mistake said at start-up."""
    if settings.slack_app_token and slack_app_kind(settings)[0] == "marketplace":
        raise InvalidSecretSettingError(
            "SLACK_APP_TOKEN",
            "setting for a Marketplace app (Slack's Marketplace allows no Socket Mode app): unset it and serve "
            "Slack's requests at <public url>/slack/events",
        )


async def _start(context: PlatformContext) -> PlatformRuntime | list[PlatformRuntime]:
    refuse_socket_mode_in_the_marketplace(context.settings)
    if _many_workspaces(context.settings):
        return await _start_many(context)
    from adapters.slack.runtime import SlackRuntime

    runtime = await SlackRuntime.start(
        context.settings,
        context.db,
        ask_service=context.ask_service,
        memory=context.memory,
        indexer=context.indexer,
        listen=context.listen,
    )
    context.stack.push_async_callback(runtime.stop)
    asks = runtime.services.asks
    asks.transcript_link = context.links.for_workspace(asks.workspace_id)
    if context.left is not None:
        left = context.left
        runtime.services.left = lambda: left("slack", "")
    # Mounted in Socket Mode too, for the member install flow; its /events then answers 404 (events use the socket).
    endpoint = {"mount_path": MOUNT_PATH, "asgi": runtime.http} if context.listen else {}
    return PlatformRuntime("slack", asks, runtime.ingest, **endpoint)


SLACK = PlatformStarter("slack", _enabled, _start)


async def _start_many(context: PlatformContext) -> list[PlatformRuntime]:
    """One runtime per workspace installed at start-up, plus the endpoint (install flow and events) for all of them;
    a workspace installed later is announced to the process (`context.joined`) as it opens."""
    from adapters.slack.oauth_runtime import SlackOAuthRuntime
    from adapters.slack.services import SlackServices

    announced: set[str] = set()
    started = False

    def installed(team: str) -> Callable[[], bool]:
        """Whether `team` still has askwith installed (an uninstall closes its services)."""
        return lambda: team in runtime.workspaces.teams

    def prepare(team: str, services: SlackServices) -> None:
        services.asks.transcript_link = context.links.for_workspace(services.asks.workspace_id)
        if context.left is not None:
            left = context.left
            services.left = lambda: left("slack", team)
        if started and context.joined is not None and team not in announced:
            announced.add(team)
            context.joined(PlatformRuntime("slack", services.asks, services.ingest, key=team, serving=installed(team)))

    runtime = await SlackOAuthRuntime.start(
        context.settings,
        context.db,
        ask_service=context.ask_service,
        memory=context.memory,
        indexer=context.indexer,
        prepare=prepare,
    )
    context.stack.push_async_callback(runtime.stop)
    teams = [
        PlatformRuntime("slack", svc.asks, svc.ingest, key=team, serving=installed(team))
        for team, svc in zip(runtime.workspaces.teams, runtime.workspaces.all(), strict=True)
    ]
    announced.update(runtime.workspaces.teams)
    started = True  # from now on, a workspace that opens has just installed askwith
    endpoint = (
        [PlatformRuntime("slack", None, None, mount_path=MOUNT_PATH, asgi=runtime.http)] if context.listen else []
    )
    return teams + endpoint
