"""`askwith ask --workspace W --as alice --with bob [--with carol] "question"`: one ask on a local workspace."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from adapters.local.registry import LocalWorkspaces
from adapters.local.workspace import ApprovalResponder
from bot.agents.ablations import NAMES
from bot.asks.read_models.transcripts import Transcript, load_transcript
from bot.asks.runtime import SCRIPTED_PRIVATE_MODEL, scripted_backend
from bot.asks.service import AskOutcome, AskRequest, AskService
from bot.cli.ingest import ingest_into
from bot.cli.printable import printable
from bot.cli.terminal_approvals import terminal_responder
from bot.cli.transcript_view import render_transcript
from bot.llm.client import LLMClient
from bot.llm.provider import open_llm_clients
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
    # Opening the models comes first, so a missing model is one line before any work (and local servers start).
    backend = scripted_backend(latency_s=settings.scripted_latency_seconds) if scripted else None
    private_backend = (
        scripted_backend(SCRIPTED_PRIVATE_MODEL, latency_s=settings.scripted_latency_seconds) if scripted else None
    )
    async with open_llm_clients(settings, backend=backend, private_backend=private_backend) as llms:
        return await ask_on_local_workspace(
            settings, spec, request, llm=llms.main, private_llm=llms.private, responder=responder
        )


async def ask_on_local_workspace(
    settings: Settings,
    spec: str,
    request: AskRequest,
    *,
    llm: LLMClient,
    private_llm: LLMClient | None = None,
    responder: ApprovalResponder | None = None,
) -> tuple[AskOutcome, Transcript]:
    """`responder`: who answers `ask`-policy approvals (None: they wait for the local workspace's UI)."""
    from bot.memory.services import MemoryServices  # imports chromadb (~1 s): only commands that need it pay

    port = LocalWorkspaces(settings).open(spec)
    port.approval_responder = responder
    services = await MemoryServices.open(settings)
    try:
        # Bring members' memory up to date first, clear and fuzzy, exactly as `askwith ingest` does (incremental:
        # only what is new since the last run).
        report = await ingest_into(services, port)
        memory = services.access(reader=private_llm)
        service = AskService(
            settings=settings, db=services.db, port=port, llm=llm, memory=memory, workspace_id=report.workspace_id
        )
        outcome = await service.ask(request)
        port.save()  # the answer and the hidden thread stay in the workspace's file
        return outcome, await load_transcript(services.db, outcome.ask_id)
    finally:
        await services.close()


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
