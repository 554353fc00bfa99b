"""`askwith ask --workspace W --as alice --with bob [--with carol] "question"`: one ask on a local workspace."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from adapters.local.registry import LocalWorkspaces
from adapters.local.workspace import ApprovalResponder, LocalWorkspace
from bot.agents.ablations import NAMES
from bot.asks.composition import AskRoot, open_root
from bot.asks.read_models.transcripts import Transcript, load_transcript
from bot.asks.runtime import SCRIPTED_PRIVATE_MODEL, scripted_backend
from bot.asks.service import AskOutcome, AskRequest
from bot.cli.ingest import ingest_into
from bot.cli.printable import printable
from bot.cli.terminal_approvals import terminal_responder
from bot.cli.transcript_view import render_transcript
from bot.settings import Settings
from bot.store.db import run


WORKSPACE_HELP = "acme (bundled sample), friendstv (needs ASKWITH_BENCH_DATA_DIR), a world JSON file, or an id."
ABLATION_HELP = f"Switch a mechanism off (repeatable): {', '.join(NAMES)}."
SCRIPTED_NOTE = "Scripted demo model: this shows how askwith works offline, NOT the quality of its answers."

out = Console()


def ask(
    question: Annotated[str, typer.Argument(help="What to ask.")],
    workspace: Annotated[str, typer.Option("--workspace", "-w", help=WORKSPACE_HELP)],
    as_member: Annotated[str, typer.Option("--as", help="The member who asks.")],
    colleagues: Annotated[list[str], typer.Option("--with", help="A colleague to ask with (repeat for several).")],
    ablation: Annotated[list[str] | None, typer.Option("--ablation", help=ABLATION_HELP)] = None,
    scripted: Annotated[
        bool, typer.Option("--scripted", help="Offline demo: a scripted stand-in plays the model.")
    ] = False,
) -> None:
    """Ask a question with colleagues' agents; print the answer, a short transcript and the cost."""
    settings = Settings.load()
    request = AskRequest(as_member, list(colleagues), question, ablations=list(ablation or []))
    responder = terminal_responder(out, interactive=sys.stdin.isatty())
    outcome, transcript = run(_ask_with_models(settings, workspace, request, scripted=scripted, responder=responder))
    if scripted:
        out.print(f"[yellow]{SCRIPTED_NOTE}[/yellow]")
    style = "green" if outcome.status == "done" else "red"
    out.print(Panel(Text(printable(outcome.final_text)), title=f"ask #{outcome.ask_id}", border_style=style))
    out.print(render_transcript(transcript, short=True))


async def _ask_with_models(
    settings: Settings, spec: str, request: AskRequest, *, scripted: bool, responder: ApprovalResponder | None = None
) -> tuple[AskOutcome, Transcript]:
    # The workspace is found first, as `askwith ingest` finds it: one that is not there is one line, and no database
    # is created for it.
    port = LocalWorkspaces(settings).open(spec)
    latency_s = settings.scripted_latency_seconds
    backend = scripted_backend(latency_s=latency_s) if scripted else None
    private_backend = scripted_backend(SCRIPTED_PRIVATE_MODEL, latency_s=latency_s) if scripted else None
    # The models open before the database, so a missing model is one line before any ingestion work (and local
    # servers start); sessions are summarised as `askwith ingest` summarises them (its endpoint), so both write the
    # same memory.
    async with open_root(
        settings, backend=backend, private_backend=private_backend, needs_model=True, summaries="endpoint"
    ) as root:
        return await ask_on_local_workspace(root, port, request, responder=responder)


async def ask_on_local_workspace(
    root: AskRoot, port: LocalWorkspace, request: AskRequest, *, responder: ApprovalResponder | None = None
) -> tuple[AskOutcome, Transcript]:
    """`responder`: who answers `ask`-policy approvals (None: they wait for the local workspace's UI)."""
    port.approval_responder = responder
    # Bring members' memory up to date first, clear and fuzzy, exactly as `askwith ingest` does (incremental: only
    # what is new since the last run).
    report = await ingest_into(port, root.db, indexer=root.memory.indexer, page_size=root.settings.ingest_page_size)
    service = root.ask_service(port, report.workspace_id)
    outcome = await service.ask(request)
    port.save()  # the answer and the hidden thread stay in the workspace's file
    return outcome, await load_transcript(root.db, outcome.ask_id)


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
