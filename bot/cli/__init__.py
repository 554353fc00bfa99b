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


def _register_all() -> None:
    from bot.cli import bench, bench_negotiation, ingest, memory, negotiate

    for module in (ingest, memory, bench, bench_negotiation, negotiate):
        module.register(app)


def main() -> None:
    _register_all()
    try:
        settings = Settings.load()
        logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        app(standalone_mode=False)
    except AskwithError as exc:
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(1)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        sys.exit(130)
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
