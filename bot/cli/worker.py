"""`askwith worker`: a standalone ask worker. It claims queued asks, and asks whose worker died, from the shared
database and runs them, posting answers through the Slack / Discord API. `askwith serve` already runs one; start more
on other machines when several processes share a PostgreSQL database (ASKWITH_DATABASE_URL)."""

from __future__ import annotations

from functools import partial

import typer
from rich.console import Console

from bot.asks.runtime import build_llm
from bot.cli.serve import SCRIPTED_HELP
from bot.serve.process import work_forever
from bot.serve.runtime import Runtime
from bot.settings import Settings
from bot.store.db import run


out = Console()


def worker(scripted: bool = typer.Option(False, "--scripted", help=SCRIPTED_HELP)) -> None:
    """Run asks from the shared database for the configured Slack / Discord workspaces, until interrupted."""
    settings = Settings.load()
    llm = build_llm(settings, scripted=True) if scripted else None
    run(work_forever(settings, on_ready=partial(_announce, settings), llm=llm))


def _announce(settings: Settings, runtime: Runtime) -> None:
    names = ", ".join(p.name for p in runtime.platforms)
    out.print(f"Ask worker running for [bold]{names}[/bold]; stop with Ctrl-C.")
    if runtime.db.dialect == "sqlite":
        out.print(
            "[yellow]SQLite[/yellow]: meant for one worker, and `askwith serve` runs one already; "
            "set ASKWITH_DATABASE_URL to PostgreSQL for several."
        )


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
