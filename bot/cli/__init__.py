"""The `askwith` command line. Each sub-command module exposes `register(app)`; this file only wires them."""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console

from bot.errors import AskwithError
from bot.settings import Settings


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
    )

    for module in (ingest, memory, bench, bench_negotiation, bench_run, negotiate, ask, transcripts, serve, slack):
        module.register(app)


def main() -> None:
    _register_all()
    try:
        settings = Settings.load()
        logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        app()  # standalone: typer reports usage errors itself and exits; our own errors come out here
    except AskwithError as exc:
        err.print(f"[red]error:[/red] {exc}", soft_wrap=True)  # one line, however narrow the terminal
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("aborted")
        sys.exit(130)
