"""Discord as `askwith serve` hosts it: enabled by DISCORD_BOT_TOKEN; logs in, mirrors the server, syncs the commands,
then keeps the gateway connection (events, interactions) in a background task until the process stops.

discord.py is imported inside `start`, so registering the starter costs nothing when Discord is not used.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import partial
from typing import TYPE_CHECKING

from bot.platform.runtime import PlatformContext, PlatformRuntime, PlatformStarter
from bot.settings import Settings


if TYPE_CHECKING:
    from adapters.discord.bot import DiscordRuntime
    from adapters.discord.services import DiscordServices


log = logging.getLogger(__name__)
GATEWAY_CLOSE_S = 5.0


def _enabled(settings: Settings) -> bool:
    return bool(settings.discord_bot_token)


async def _start(context: PlatformContext) -> list[PlatformRuntime]:
    """One runtime per server the bot serves: each its own workspace, ask service and ingestion worker."""
    from adapters.discord.bot import build_client, start_discord

    client = build_client()
    context.stack.push_async_callback(client.close)  # closes the HTTP session even if start fails half-way
    runtime = await start_discord(
        context.settings,
        db=context.db,
        ask_service=context.ask_service,
        client=client,
        indexer=context.indexer,
        worker=False,  # the hosting process runs the ask worker for every platform
        mirror=context.listen,  # `askwith worker` runs asks only: no gateway, no sync, no listing at start
    )
    for services in runtime.guilds:
        services.asks.transcript_link = context.links.for_workspace(services.asks.workspace_id)
    if context.left is not None:
        left = context.left
        runtime.on_left = lambda guild_id: left("discord", guild_id)
    if context.joined is not None:
        runtime.on_joined = partial(_joined, context)
    if context.listen:
        gateway = asyncio.create_task(_gateway(runtime), name="askwith-discord-gateway")
        context.stack.push_async_callback(_stop_gateway, runtime, gateway)
    return [_platform(s) for s in runtime.guilds]


def _platform(services: DiscordServices) -> PlatformRuntime:
    return PlatformRuntime("discord", services.asks, services.ingest, key=services.workspace.external_id)


def _joined(context: PlatformContext, services: DiscordServices) -> None:
    """A server joined while running: scheduled and served like those present at start."""
    services.asks.transcript_link = context.links.for_workspace(services.asks.workspace_id)
    if context.joined is not None:
        context.joined(_platform(services))


async def _gateway(runtime: DiscordRuntime) -> None:
    """The gateway connection; discord.py reconnects by itself, so ending here means it gave up (bad token,
    privileged intents not enabled in the Developer Portal, ...): said once, in the log."""
    try:
        await runtime.connect()
    except Exception as exc:
        log.error("Discord gateway stopped: %s", exc or type(exc).__name__)


async def _stop_gateway(runtime: DiscordRuntime, gateway: asyncio.Task[None]) -> None:
    await runtime.close()  # closing the client ends the gateway loop
    _, pending = await asyncio.wait({gateway}, timeout=GATEWAY_CLOSE_S)
    for task in pending:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


DISCORD = PlatformStarter("discord", _enabled, _start)
