"""The `askwith` command line. Each sub-command module exposes `register(app)`; this file only wires them."""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console

from bot.errors import AskwithError
from bot.settings import Settings


# Libraries that log their routine steps at INFO (Alembic's "Context impl SQLiteImpl", each HTTP request, each
# scheduled run): quiet at WARNING unless ASKWITH_LOG_LEVEL=DEBUG, so askwith's own lines are what the operator reads.
LIBRARY_LOGGERS = (
    "alembic", "httpx", "httpcore", "chromadb", "discord", "slack_bolt", "slack_sdk", "apscheduler", "aiohttp",
)  # fmt: skip

app = typer.Typer(name="askwith", help="Personal agents that answer questions together.", no_args_is_help=True)
err = Console(stderr=True)


@app.callback()
def _root() -> None:
    """Keeps every command a sub-command (`askwith ingest`), however many are registered."""


def _register_all() -> None:
    from bot.cli import (
        ask,
        bench,
        bench_negotiation,
        bench_run,
        ingest,
        memory,
        negotiate,
        serve,
        slack,
        transcripts,
        worker,
    )

    modules = (ingest, memory, bench, bench_negotiation, bench_run, negotiate, ask, transcripts, serve, worker, slack)
    for module in modules:
        module.register(app)


def _configure_logging(settings: Settings) -> None:
    level = settings.log_level.upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if level != "DEBUG":
        for name in LIBRARY_LOGGERS:
            logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))


def main() -> None:
    _register_all()
    try:
        settings = Settings.load()
        _configure_logging(settings)
        app()  # standalone: typer reports usage errors itself and exits; our own errors come out here
    except AskwithError as exc:
        err.print(f"[red]error:[/red] {exc}", soft_wrap=True)  # one line, however narrow the terminal
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("aborted")
        sys.exit(130)
