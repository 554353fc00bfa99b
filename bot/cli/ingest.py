"""`askwith ingest --workspace W`: pull a workspace's history into its members' memory, once, with a progress bar."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from adapters.local.registry import LocalWorkspaces
from bot.errors import LiveMemoryWorkspaceError
from bot.memory.live import memory_source
from bot.platform.port import ChatPort
from bot.settings import Settings
from bot.store.db import Database, run
from memory_ingest.report import IngestProgress, IngestReport, Stage
from memory_ingest.worker import IngestWorker


if TYPE_CHECKING:
    from bot.memory.indexer import SessionIndexer

STAGE_LABELS = {Stage.HISTORY: "Reading channels", Stage.INDEX: "Summarizing and embedding sessions"}
WORKSPACE_HELP = "acme (bundled sample), friendstv (needs ASKWITH_BENCH_DATA_DIR), a world JSON file, or an id."

out = Console()


def ingest(
    workspace: str = typer.Option(..., "--workspace", "-w", help=WORKSPACE_HELP),
    page_size: int | None = typer.Option(None, min=1, help="Messages per history page [ASKWITH_INGEST_PAGE_SIZE]."),
) -> None:
    """Mirror a workspace and pull new history into members' memory (incremental, resumable)."""
    settings = Settings.load()
    refuse_live(settings, workspace)
    if page_size is not None:
        settings = settings.replace(ingest_page_size=page_size)
    report = run(ingest_workspace(settings, workspace))
    out.print(report_table(report))
    if (problems := problems_table(report)) is not None:
        out.print(problems)


def refuse_live(settings: Settings, spec: str) -> None:
    """A workspace named `platform:id` whose memory source is live is never mirrored (Slack's terms for distributed
    apps forbid keeping a copy)."""
    platform, named, _ = spec.partition(":")
    if named and memory_source(settings, platform) == "live":
        raise LiveMemoryWorkspaceError(spec)


async def ingest_workspace(settings: Settings, spec: str) -> IngestReport:
    from bot.memory.services import MemoryServices  # imports chromadb (~1 s): only commands that need it pay

    port = LocalWorkspaces(settings).open(spec)
    services = await MemoryServices.open(settings)
    try:
        return await ingest_into(port, services.db, indexer=services.indexer(), page_size=settings.ingest_page_size)
    finally:
        await services.close()


async def ingest_into(port: ChatPort, db: Database, *, indexer: SessionIndexer | None, page_size: int) -> IngestReport:
    """The one ingestion path of the CLI (`askwith ingest` and `askwith ask`): history, then fuzzy memory."""
    worker = IngestWorker(port, db, indexer=indexer, page_size=page_size)
    with progress_bar() as progress:
        return await worker.run(progress=progress)


@contextmanager
def progress_bar() -> Iterator[IngestProgress]:
    """A rich progress bar (on stderr) with one line per ingestion stage."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True)) as bar:
        tasks: dict[Stage, int] = {}

        def update(stage: Stage, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(STAGE_LABELS[stage], total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def report_table(report: IngestReport) -> Table:
    table = Table(title=f"Ingested {report.workspace_name}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    rows = [
        ("members", f"{report.members:,} ({report.members_opted_in:,} opted in)"),
        ("channels", f"{report.channels:,} ({report.channels_ingested:,} ingested)"),
        ("messages added", f"{report.messages_added:,}"),
        ("messages total", f"{report.messages_total:,}"),
        ("posts skipped", f"{report.messages_skipped:,}"),
        ("sessions added", _maybe(report.sessions_added)),
        ("summaries added", _maybe(report.summaries_added)),
        ("embeddings added", _maybe(report.embeddings_added)),
        ("time", f"{report.seconds:.1f} s"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def problems_table(report: IngestReport) -> Table | None:
    """Channels, threads and member tokens that are not read normally (backing off, retired, disabled, paused)."""
    if not report.problems:
        return None
    table = Table(title="Objects not read normally", title_justify="left")
    for column in ("kind", "object", "status", "failures", "next try", "last error"):
        table.add_column(column)
    for state in report.problems:
        retry = state.retry_at.strftime("%Y-%m-%d %H:%M:%S UTC") if state.retry_at else "-"
        table.add_row(
            state.kind.value, state.object_id, state.status.value, str(state.failures), retry, state.last_error
        )
    return table


def _maybe(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)
