"""The `askwith` command line. Each sub-command module exposes `register(app)`; this file only wires them."""

from __future__ import annotations

import signal
import sys

import typer
from rich.console import Console

from bot.base.logs import configure_logging
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
        forget,
        ingest,
        memory,
        negotiate,
        serve,
        slack,
        transcripts,
        worker,
    )

    modules = (
        ingest, memory, bench, bench_negotiation, bench_run, negotiate, ask, transcripts, serve, worker, slack, forget,
    )  # fmt: skip
    for module in modules:
        module.register(app)


def _terminate_like_ctrl_c(_signum: int, _frame: object) -> None:
    # SIGTERM (kill, a service manager) takes the path Ctrl-C takes: the running command is cancelled, so a local
    # model server is stopped and an ask in progress is recorded as interrupted instead of `running` forever.
    signal.raise_signal(signal.SIGINT)


def main() -> None:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Inherited as ignored (a background job of a non-interactive shell): asyncio then installs no Ctrl-C
        # handler, and SIGTERM, which takes Ctrl-C's path, would do nothing while an ask waits on the model.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminate_like_ctrl_c)
    _register_all()
    try:
        settings = Settings.load()
        configure_logging(settings)
        app()  # standalone: typer reports usage errors itself and exits; our own errors come out here
    except AskwithError as exc:
        err.print(f"[red]error:[/red] {exc}", soft_wrap=True)  # one line, however narrow the terminal
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("aborted")
        sys.exit(130)
