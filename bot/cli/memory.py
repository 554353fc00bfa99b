"""`askwith memory search`: search one member's memory exactly as their agent would, and print the ranked hits.

    askwith memory search --workspace acme --as bob thursday
    askwith memory search -w acme --as bob --channel general --context 2 'rehearsal "press kit"'
    askwith memory search -w friendstv --as monica --fuzzy "who is moving out"

Clear memory (the default) is full-text search over the messages the member can see; quotes inside the query keep
words together as a phrase. `--fuzzy` searches the summaries of conversation sessions instead; with `--context` above
0 it also shows each session's messages.
"""

from __future__ import annotations

import shlex
from datetime import UTC, datetime, time, timedelta

import typer
from rich.console import Console

from adapters.local.registry import LocalWorkspaces
from adapters.local.workspace import LocalWorkspace
from bot.cli import memory_view
from bot.errors import WorkspaceNotIngestedError
from bot.memory.types import ClearHit, ClearQuery, FuzzyHit, FuzzyQuery, Viewer
from bot.memory.visibility import resolve_viewer
from bot.settings import Settings
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database, run


memory_app = typer.Typer(help="Look inside members' memories: exactly what a member's agent can see.")
out = Console()
QUERY_HELP = "Keywords; quote several words to keep them together as a phrase (with --fuzzy: a question)."


@memory_app.command("search")
def search(
    query: list[str] = typer.Argument(..., help=QUERY_HELP),  # noqa: B008 - typer declares parameters this way
    workspace: str = typer.Option(..., "--workspace", "-w", help="acme, friendstv, a world JSON file, or an id."),
    member: str = typer.Option(..., "--as", help="The member whose agent's view to search (handle or id)."),
    fuzzy: bool = typer.Option(False, "--fuzzy", help="Search session summaries (fuzzy memory) instead."),
    sender: str | None = typer.Option(None, help="Only messages from this member (clear memory)."),
    channel: str | None = typer.Option(None, help="Only this channel, by name or id (clear memory)."),
    since: str | None = typer.Option(None, help="From this ISO date or time, UTC (clear memory)."),
    until: str | None = typer.Option(None, help="Up to this ISO date (inclusive) or time, UTC (clear memory)."),
    context: int = typer.Option(
        1, min=0, help="Neighbouring messages on each side of a hit; with --fuzzy, >0 shows the session's messages."
    ),
    limit: int = typer.Option(10, min=1, help="Most hits (clear memory)."),
    top_k: int = typer.Option(3, "--top-k", min=1, help="Most sessions (fuzzy memory)."),
) -> None:
    """Search a member's memory and print ranked hits with their context."""
    settings = Settings.load()
    if fuzzy:
        if any(v is not None for v in (sender, channel, since, until)):
            raise typer.BadParameter("--sender, --channel, --since and --until filter clear memory, not --fuzzy.")
        text = " ".join(query)
        run(_search(settings, workspace, member, FuzzyQuery(text=text, top_k=top_k, expand=context > 0)))
        return
    clear = ClearQuery(
        keywords=tuple(word for part in query for word in shlex.split(part)),
        sender=sender,
        channel=channel,
        since=parse_when(since, "--since", end_of_day=False),
        until=parse_when(until, "--until", end_of_day=True),
        context_window=context,
        limit=limit,
    )
    run(_search(settings, workspace, member, clear))


async def _search(settings: Settings, spec: str, member: str, query: ClearQuery | FuzzyQuery) -> None:
    from bot.memory.services import MemoryServices  # imports chromadb (~1 s): only commands that need it pay

    services = await MemoryServices.open(settings)
    try:
        viewer = await viewer_for(services.db, LocalWorkspaces(settings), spec, member)
        if isinstance(query, FuzzyQuery):
            shown = f'"{query.text}"'
            hits: list[ClearHit] | list[FuzzyHit] = await services.fuzzy().search(viewer, query)
        else:
            shown = " ".join(f'"{k}"' if " " in k else k for k in query.keywords)
            hits = await services.clear().search(viewer, query)
    finally:
        await services.close()
    if not hits:
        out.print(f"Nothing {viewer.name} can see matches {shown}.", highlight=False)
        return
    out.print(f"{len(hits)} hit(s) for {shown} in what {viewer.name}'s agent can see:\n", highlight=False)
    out.print(memory_view.hits(hits))


async def viewer_for(db: Database, workspaces: LocalWorkspaces, spec: str, member: str) -> Viewer:
    """The member of an ingested local workspace on whose behalf a search runs."""
    key = WorkspaceKey(LocalWorkspace.platform, workspaces.world_id(spec))
    async with db.session() as session:
        workspace_id = await ChatStore(db).find_workspace(session, key)
        if workspace_id is None:
            raise WorkspaceNotIngestedError(spec)
        return await resolve_viewer(session, workspace_id, member)


def parse_when(value: str | None, option: str, *, end_of_day: bool) -> datetime | None:
    """An ISO date or date-time as UTC; a bare date means the start of that day, or its end for `--until`."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise typer.BadParameter(f"{option} wants an ISO date or time, e.g. 2026-11-16 or 2026-11-16T09:00.") from exc
    if end_of_day and len(value) == 10:  # a bare date: include the whole day
        moment = datetime.combine(moment.date(), time.min) + timedelta(days=1, microseconds=-1)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")
