"""The `askwith serve` process: the web app (whose lifespan runs everything else) on a uvicorn server.

app = serve_app(settings)      # a Starlette app whose lifespan starts the runtime (tests, other ASGI servers)
await serve_forever(settings, workspace=None, on_ready=print_url)   # start everything, then serve
await work_forever(settings, on_ready=print_workers)                # `askwith worker`: asks only, no web app

Both stop cleanly on SIGINT or SIGTERM: the runtime's shutdown (ask workers, platforms, database) runs to the end.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

import uvicorn
from starlette.applications import Starlette

from bot.asks.composition import MemoryFactory
from bot.llm.client import LLMClient
from bot.serve.platforms import enabled_platforms
from bot.serve.runtime import Runtime, running
from bot.serve.signals import stop_on_signals
from bot.settings import Settings
from bot.web.app import build_app
from bot.web.auth import picker_allowed


def link_secret(settings: Settings) -> str:
    """The configured secret; a local-only server may use a random one (its links only need to last this run)."""
    if settings.link_secret:
        return settings.link_secret
    if enabled_platforms(settings):
        settings.require("link_secret")  # links posted in Slack/Discord must survive a restart
    return secrets.token_urlsafe(32)


def serve_app(
    settings: Settings,
    *,
    llm: LLMClient | None = None,
    memory: MemoryFactory | None = None,
    workspace: str | None = None,
    secret: str | None = None,
) -> Starlette:
    local = not enabled_platforms(settings)
    secret = secret or link_secret(settings)
    return build_app(
        settings,
        secret=secret,
        start=lambda: running(settings, secret=secret, llm=llm, memory=memory, local_workspace=workspace),
        local_picker=picker_allowed(settings, local_workspace=local),
    )


async def serve_forever(
    settings: Settings, *, workspace: str | None, on_ready: Callable[[Runtime], None], llm: LLMClient | None = None
) -> None:
    """Start everything (a startup problem raises here, as one clear error), then serve until interrupted."""
    secret = link_secret(settings)
    async with running(settings, secret=secret, llm=llm, local_workspace=workspace) as runtime:
        app = build_app(
            settings,
            secret=secret,
            start=lambda: _started(runtime),
            local_picker=picker_allowed(settings, local_workspace=runtime.local is not None),
        )
        # log_config=None: uvicorn's loggers (the access log too) go through askwith's root handler, whose filter
        # keeps secrets and link tokens out of every line.
        config = uvicorn.Config(
            app, host=settings.web_host, port=settings.web_port, lifespan="on", log_level=settings.log_level.lower(),
            log_config=None,
        )  # fmt: skip
        server = _Server(config)
        watcher = asyncio.create_task(_when_started(server, lambda: on_ready(runtime)))
        try:
            await server.serve()
        finally:
            watcher.cancel()


@asynccontextmanager
async def _started(runtime: Runtime) -> AsyncIterator[Runtime]:
    yield runtime


async def _when_started(server: uvicorn.Server, on_ready: Callable[[], None]) -> None:
    while not server.started:
        await asyncio.sleep(0.05)
    on_ready()


async def work_forever(
    settings: Settings,
    *,
    on_ready: Callable[[Runtime], None],
    llm: LLMClient | None = None,
    workspace: str | None = None,
) -> None:
    """`askwith worker`: run the platforms' queued (and abandoned) asks from the shared database until stopped, and
    those of the local `workspace` when one is named."""
    stop = asyncio.Event()
    with stop_on_signals(lambda _signal: stop.set()):
        secret = link_secret(settings)
        async with running(settings, secret=secret, llm=llm, local_workspace=workspace, serving=False) as runtime:
            on_ready(runtime)
            await stop.wait()


class _Server(uvicorn.Server):
    """uvicorn re-raises a captured SIGTERM once it has stopped serving, which would end the process before the
    runtime around it shuts down; here the signals only ask the server to exit, and `serve_forever` returns."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        with stop_on_signals(lambda sig: self.handle_exit(sig, None)):
            yield
