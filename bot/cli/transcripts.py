"""`askwith transcripts list|show ID`: read the record of asks."""

from __future__ import annotations

import logging

import typer
from rich.console import Console
from rich.table import Table

from bot.asks import models
from bot.asks.read_models.ask_view import Viewer
from bot.asks.read_models.transcripts import Transcript, list_asks, load_transcript
from bot.cli.printable import printable
from bot.cli.transcript_view import render_prompts, render_transcript
from bot.settings import Settings
from bot.store.db import Database, run


transcripts_app = typer.Typer(name="transcripts", help="Read what agents said, searched and found.")
out = Console()
log = logging.getLogger(__name__)


@transcripts_app.command("list")
def list_command(limit: int = typer.Option(20, min=1, help="How many of the latest asks.")) -> None:
    """The latest asks, newest first."""
    asks = run(_with_db(Settings.load(), lambda db: list_asks(db, limit=limit)))
    table = Table("id", "status", "requester", "with", "question", "calls", "tokens", "wall")
    for ask in asks:
        table.add_row(*(printable(cell) for cell in _row(ask)))
    out.print(table)


@transcripts_app.command("show")
def show_command(
    ask_id: int = typer.Argument(..., help="The ask's id."),
    prompts: bool = typer.Option(False, "--prompts", help="Also print the prompts the model was sent."),
    member: str = typer.Option("", "--as", help="Show it as this member sees it (default: the member who asked)."),
) -> None:
    """One ask as a member sees it: what each agent let out to them, their own agent's plans, memory queries and
    prompts, sub-conversations, consensus, cost. Every agent's internals only with ASKWITH_ADMIN_RAW_PROMPTS=true
    (each such read is logged)."""
    settings = Settings.load()
    transcript: Transcript = run(_with_db(settings, lambda db: load_transcript(db, ask_id)))
    ask = transcript.ask
    viewer = Viewer(member or ask.requester, raw=settings.admin_raw_prompts)
    if viewer.raw:  # an explicit, off-by-default setting: every read of other members' internals is on record
        log.warning("the raw prompts and agents' internals of ask #%s were read from the command line", ask_id)
    heading = f"ask #{ask.id} {ask.requester} with {', '.join(ask.colleagues)}: {ask.question}"
    out.print(printable(heading), markup=False)
    if ask.ablations:
        out.print(f"ablations: {', '.join(ask.ablations)}")
    out.print(render_transcript(transcript, viewer=viewer))
    if prompts:
        out.print(render_prompts(transcript, viewer=viewer))
    if viewer.raw or viewer.handle == ask.requester:  # the post that answered them (readers of a view: the web)
        out.print(printable(ask.final_text or "(no answer yet)"), markup=False)


def _row(ask: models.Ask) -> list[str]:
    tokens = ask.prompt_tokens + ask.completion_tokens
    question = ask.question if len(ask.question) <= 60 else ask.question[:59] + "…"
    return [
        str(ask.id), ask.status, ask.requester, ", ".join(ask.colleagues), question,
        str(ask.llm_calls), f"{tokens:,}", f"{ask.wall_s:.1f} s",
    ]  # fmt: skip


async def _with_db(settings: Settings, read):  # noqa: ANN001, ANN202
    db = await Database.open(settings)
    try:
        return await read(db)
    finally:
        await db.close()


def register(app: typer.Typer) -> None:
    if not any(info.typer_instance is transcripts_app for info in app.registered_groups):
        app.add_typer(transcripts_app)
