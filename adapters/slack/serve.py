"""Slack as `askwith serve` hosts it: enabled by SLACK_BOT_TOKEN; HTTP endpoint mounted at /slack (Slack's request
URL is `<public url>/slack/events`), or Socket Mode when SLACK_APP_TOKEN is set.

Slack's libraries are imported inside `start`, so registering the starter costs nothing when Slack is not used.
"""

from __future__ import annotations

from bot.serve.platforms import PlatformContext, PlatformRuntime, PlatformStarter
from bot.settings import Settings


MOUNT_PATH = "/slack"


def _enabled(settings: Settings) -> bool:
    return bool(settings.slack_bot_token)


async def _start(context: PlatformContext) -> PlatformRuntime:
    from adapters.slack.runtime import SlackRuntime

    runtime = await SlackRuntime.start(
        context.settings,
        context.db,
        llm=context.llm,
        memory=context.memory,
        indexer=context.indexer,
        listen=context.listen,
    )
    context.stack.push_async_callback(runtime.stop)
    asks = runtime.services.asks
    asks.transcript_link = context.links.for_workspace(asks.workspace_id)
    # Mounted in Socket Mode too, for the member install flow; its /events then answers 404 (events use the socket).
    endpoint = {"mount_path": MOUNT_PATH, "asgi": runtime.http} if context.listen else {}
    return PlatformRuntime("slack", asks, runtime.ingest, **endpoint)


SLACK = PlatformStarter("slack", _enabled, _start)
