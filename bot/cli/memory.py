"""`askwith memory search`: search one member's memory exactly as their agent would, and print the ranked hits.

    askwith memory search --workspace acme --as bob thursday
    askwith memory search -w acme --as bob --channel general --context 2 'rehearsal "press kit"'
    askwith memory search -w acme --as alice "when's Bob free on Thursday?"
    askwith memory search -w friendstv --as monica --fuzzy "who is moving out"
    askwith memory search -w discord:1234567890 --as alice launch     # a Discord server askwith serves

The query is read by `bot.memory.query.read_query`, as the agents' searches are: any typed text is accepted (a
question, keywords, quotes for phrases); the member's own name is not searched for; dates ("yesterday", "on 8 May")
rank the messages of that span first. The default search is hybrid (full-text ranking fused with dense search over
message windows); `--lexical` keeps to full text. `--fuzzy` searches conversation sessions instead; with `--context`
above 0 it also shows each session's best-matching messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

import typer
from rich.console import Console

from adapters.local.registry import LocalWorkspaces
from adapters.local.workspace import LocalWorkspace
from bot.cli import memory_view
from bot.errors import WorkspaceNotIngestedError
from bot.memory.query import DEFAULT_CONTEXT, ReadQuery, read_query, search_typed
from bot.memory.types import ClearHit, FuzzyHit, FuzzyQuery, Viewer
from bot.memory.visibility import named_viewer
from bot.settings import Settings
from bot.store.chat_store import WorkspaceKey
from bot.store.db import Database, run
from bot.store.member_directory import workspace_member


memory_app = typer.Typer(help="Look inside members' memories: exactly what a member's agent can see.")
out = Console()
PLATFORMS = ("discord", "slack")  # `--workspace discord:<server id>` searches a platform workspace ingested before
QUERY_HELP = "A question or keywords; quote several words to keep them together as a phrase."


@memory_app.command("search")
def search(
    query: list[str] = typer.Argument(..., help=QUERY_HELP),  # noqa: B008 - typer declares parameters this way
    workspace: str = typer.Option(
        ..., "--workspace", "-w", help="acme, friendstv, a world JSON file, an id, or discord:<server id>."
    ),
    member: str = typer.Option(..., "--as", help="The member whose agent's view to search (handle or id)."),
    fuzzy: bool = typer.Option(False, "--fuzzy", help="Search conversation sessions (fuzzy memory) instead."),
    lexical: bool = typer.Option(False, "--lexical", help="Full-text ranking only (no dense side)."),
    sender: str | None = typer.Option(None, help="Only messages from this member (clear memory)."),
    channel: str | None = typer.Option(None, help="Only this channel, by name or id (clear memory)."),
    since: str | None = typer.Option(None, help="From this ISO date or time, UTC (clear memory)."),
    until: str | None = typer.Option(None, help="Up to this ISO date (inclusive) or time, UTC (clear memory)."),
    context: int = typer.Option(
        DEFAULT_CONTEXT,
        min=0,
        help="Neighbouring messages on each side of a hit; with --fuzzy, >0 shows the best-matching messages.",
    ),
    limit: int = typer.Option(10, min=1, help="Most hits (clear memory)."),
    top_k: int = typer.Option(3, "--top-k", min=1, help="Most sessions (fuzzy memory)."),
) -> None:
    """Search a member's memory and print ranked hits with their context."""
    settings = Settings.load()
    text = " ".join(query)
    if fuzzy:
        if any(v is not None for v in (sender, channel, since, until)):
            raise typer.BadParameter("--sender, --channel, --since and --until filter clear memory, not --fuzzy.")
        run(_search(settings, workspace, member, FuzzyQuery(text=text, top_k=top_k, expand=context > 0)))
        return
    options = ClearOptions(
        sender=sender,
        channel=channel,
        since=parse_when(since, "--since", end_of_day=False),
        until=parse_when(until, "--until", end_of_day=True),
        context_window=context,
        limit=limit,
        lexical=lexical,
    )
    run(_search(settings, workspace, member, text, options))


@dataclass(frozen=True)
class ClearOptions:
    sender: str | None
    channel: str | None
    since: datetime | None
    until: datetime | None
    context_window: int
    limit: int
    lexical: bool


async def _search(
    settings: Settings, spec: str, member: str, query: str | FuzzyQuery, options: ClearOptions | None = None
) -> None:
    from bot.memory.services import MemoryServices  # imports chromadb (~1 s): only commands that need it pay

    services = await MemoryServices.open(settings)
    try:
        viewer = await viewer_for(services.db, LocalWorkspaces(settings), spec, member)
        if isinstance(query, FuzzyQuery):
            shown = f'"{query.text}"'
            hits: list[ClearHit] | list[FuzzyHit] = await services.fuzzy().search(viewer, query)
        else:
            read = read_query(query, participants=[viewer.name], tz=settings.timezone)
            shown = shown_query(read)
            memory = services.clear() if options is None or options.lexical else services.hybrid()
            hits = await search_typed(memory, viewer, read, **_filters(options))
    finally:
        await services.close()
    if not hits:
        out.print(f"Nothing {viewer.name} can see matches {shown}.", highlight=False)
        return
    out.print(f"{len(hits)} hit(s) for {shown} in what {viewer.name}'s agent can see:\n", highlight=False)
    out.print(memory_view.hits(hits))


def _filters(options: ClearOptions | None) -> dict[str, object]:
    if options is None:
        return {}
    return {k: v for k, v in options.__dict__.items() if k != "lexical"}


def shown_query(read: ReadQuery) -> str:
    """The words searched for, phrases quoted, and the dates read."""
    shown = " ".join(f'"{k}"' if " " in k else k for k in read.keywords) or f'"{read.text}"'
    return shown + "".join(f" (date: {phrase})" for phrase in read.dates)


async def viewer_for(db: Database, workspaces: LocalWorkspaces, spec: str, member: str) -> Viewer:
    """The member on whose behalf a search runs, in an ingested local workspace or, named `discord:<server id>` or
    `slack:<team id>`, in a chat platform's workspace."""
    platform, _, external_id = spec.partition(":")
    if platform in PLATFORMS and external_id:
        key = WorkspaceKey(platform, external_id)
    else:
        key = WorkspaceKey(LocalWorkspace.platform, workspaces.world_id(spec))
    workspace_id, found = await workspace_member(db, key, member)
    if workspace_id is None:
        raise WorkspaceNotIngestedError(spec)
    return named_viewer(workspace_id, member, found)


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
