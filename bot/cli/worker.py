"""`askwith worker`: a standalone ask worker. It claims queued asks, and asks whose worker died, from the shared
database and runs them, posting answers through the Slack / Discord API. `askwith serve` already runs one; start more
on other machines when several processes share a PostgreSQL database (ASKWITH_DATABASE_URL).

    askwith worker                                  # the Slack / Discord workspaces' asks
    askwith worker --workspace team.json --scripted # a local workspace's asks too (its memory is only read here)
"""

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


WORKSPACE_HELP = (
    "Also run the asks of this local workspace (built-in name, world file or id, as `askwith serve --workspace`), "
    "submitted by the process that serves it on the same database and data directory."
)


def worker(
    scripted: bool = typer.Option(False, "--scripted", help=SCRIPTED_HELP),
    workspace: str | None = typer.Option(None, "--workspace", help=WORKSPACE_HELP),
) -> None:
    """Run asks from the shared database for the configured Slack / Discord workspaces, until interrupted."""
    settings = Settings.load()
    llm = build_llm(settings, scripted=True) if scripted else None
    run(work_forever(settings, on_ready=partial(_announce, settings), llm=llm, workspace=workspace))


def _announce(settings: Settings, runtime: Runtime) -> None:
    names = ", ".join([p.name for p in runtime.platforms] + ([f"local:{runtime.local.key}"] if runtime.local else []))
    out.print(f"Ask worker running for [bold]{names}[/bold]; stop with Ctrl-C.")
    if runtime.db.dialect == "sqlite":
        out.print(
            "[yellow]SQLite[/yellow]: meant for one worker, and `askwith serve` runs one already; "
            "set ASKWITH_DATABASE_URL to PostgreSQL for several."
        )


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
