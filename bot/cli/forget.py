"""`askwith forget --workspace W` deletes everything askwith holds for one workspace (as when it uninstalls askwith),
and `askwith status` lists the workspaces this database holds, each with its memory source and what is stored.

    askwith status
    askwith forget --workspace slack:T0123ABCD            # asks first; --yes to skip
    askwith forget --workspace discord:1234567890 --keep-asks
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from bot.asks.forget import count_workspace_rows, forget_workspace, workspace_id_of
from bot.cli.printable import printable
from bot.errors import UnknownWorkspaceError
from bot.memory.live import memory_source
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store.db import Database, run
from bot.store.workspace_totals import workspace_totals


out = Console()


def forget(
    workspace: str = typer.Option(..., "--workspace", "-w", help="platform:id, e.g. slack:T0123ABCD, discord:123."),
    keep_asks: bool = typer.Option(False, "--keep-asks", help="Keep the workspace's asks and their transcripts."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete everything askwith holds for a workspace: messages, tombstones, sessions, summaries, vectors, members,
    members' tokens, the installation, asks and transcripts (unless --keep-asks)."""
    platform, _, external_id = workspace.partition(":")
    settings = Settings.load()
    counts = run(_counts(settings, platform, external_id))
    out.print(f"{workspace}: {sum(counts.values())} rows ({_biggest(counts)})")
    if not yes and not typer.confirm(f"Delete everything askwith holds for {workspace}?"):
        raise typer.Abort()
    deleted = run(_forget(settings, platform, external_id, keep_asks=keep_asks))
    out.print(f"Deleted {sum(deleted.values())} rows and the workspace's vectors.")


def status() -> None:
    """The workspaces this database holds: memory source, messages and vectors stored, members' tokens."""
    settings = Settings.load()
    table = Table("workspace", "name", "memory", "messages", "vectors", "member tokens")
    for row in run(_status(settings)):
        table.add_row(*(printable(str(cell)) for cell in row))
    out.print(table)


def _biggest(counts: dict[str, int]) -> str:
    shown = sorted(((n, t) for t, n in counts.items() if n), reverse=True)[:4]
    return ", ".join(f"{t} {n}" for n, t in shown) or "nothing"


async def _counts(settings: Settings, platform: str, external_id: str) -> dict[str, int]:
    db = await Database.open(settings)
    try:
        workspace_id = await _id(db, platform, external_id)
        return await count_workspace_rows(db, workspace_id, (platform, external_id))
    finally:
        await db.close()


async def _forget(settings: Settings, platform: str, external_id: str, *, keep_asks: bool) -> dict[str, int]:
    db = await Database.open(settings)
    try:
        workspace_id = await _id(db, platform, external_id)
        index = VectorIndex.from_settings(settings)
        return await forget_workspace(db, workspace_id, indexes=[index, index.windows()], keep_asks=keep_asks)
    finally:
        await db.close()


async def _id(db: Database, platform: str, external_id: str) -> int:
    found = await workspace_id_of(db, platform, external_id)
    if found is None:
        raise UnknownWorkspaceError(f"{platform}:{external_id}", [])
    return found


async def _status(settings: Settings) -> list[tuple[str, str, str, int, int, int]]:
    db = await Database.open(settings)
    index = VectorIndex.from_settings(settings)
    try:
        return [
            (f"{ws.platform}:{ws.external_id}", ws.name, memory_source(settings, ws.platform), ws.messages,
             await index.count(ws.id), ws.tokens)
            for ws in await workspace_totals(db)
        ]  # fmt: skip
    finally:
        await db.close()


def register(app: typer.Typer) -> None:
    app.command("forget")(forget)
    app.command("status")(status)
