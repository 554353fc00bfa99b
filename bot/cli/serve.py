"""`askwith serve`: one long-running process hosting everything (web app, ask workers, ingestion schedule, and the
Slack endpoint / Discord bot when their tokens are set). Without platform tokens it serves a local web workspace."""

from __future__ import annotations

from functools import partial

import typer
from rich.console import Console

from bot.asks.runtime import build_llm
from bot.serve.process import serve_forever
from bot.serve.runtime import Runtime
from bot.settings import Settings
from bot.store.db import run


SCRIPTED_HELP = "Offline demo: a scripted stand-in plays the model (shows the flow, not answer quality)."
WORKSPACE_HELP = "Local workspace to host when no platform token is set [ASKWITH_SERVE_WORKSPACE]."
out = Console()


def serve(
    workspace: str | None = typer.Option(None, "--workspace", "-w", help=WORKSPACE_HELP),
    host: str | None = typer.Option(None, help="Address to bind [ASKWITH_WEB_HOST]."),
    port: int | None = typer.Option(None, help="Port to bind [ASKWITH_WEB_PORT]."),
    scripted: bool = typer.Option(False, "--scripted", help=SCRIPTED_HELP),
) -> None:
    """Serve askwith: the web app and everything behind it, until interrupted."""
    settings = Settings.load()
    overrides = {k: v for k, v in {"web_host": host, "web_port": port}.items() if v is not None}
    settings = settings.replace(**overrides)
    llm = build_llm(settings, scripted=True) if scripted else None
    run(serve_forever(settings, workspace=workspace, on_ready=partial(_announce, settings), llm=llm))


def _announce(settings: Settings, runtime: Runtime) -> None:
    url = f"http://{settings.web_host}:{settings.web_port}/"
    for platform in runtime.platforms:
        out.print(f"[green]{platform.name}[/green] connected")
    if runtime.local is not None:
        out.print(f"Local workspace [bold]{runtime.local.key}[/bold] at [link={url}]{url}[/link]")
    else:
        out.print(f"Transcripts at {settings.resolved_public_url}/")
    if runtime.llm is not None and runtime.llm.model == "scripted-demo":
        out.print("[yellow]Scripted demo model[/yellow]: it shows the flow, not answer quality.")
    if runtime.llm is None:
        out.print("[yellow]No language model configured[/yellow]: set ASKWITH_LLM_BASE_URL (see .env.example).")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
