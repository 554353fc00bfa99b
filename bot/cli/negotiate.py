"""`askwith negotiate`: two members' agents negotiate a task trade in a local workspace; both members confirm it.

askwith negotiate profile load profiles.json --workspace acme.json
askwith negotiate --workspace acme.json --as alice --with bob
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from adapters.local import LocalWorkspace
from bot.errors import NegotiationError
from bot.llm.client import LLMClient
from bot.llm.provider import open_llm_client
from bot.llm.scripted import ScriptedBackend
from bot.negotiation import messages
from bot.negotiation.members import ClientFor, MemberNegotiation, load_profiles
from bot.negotiation.model import Scenario
from bot.negotiation.profiles import load_profiles_file
from bot.negotiation.scripted import ScriptedNegotiator
from bot.platform.port import ApprovalDecision, ApprovalRequest
from bot.settings import Settings
from bot.store.db import Database, run


out = Console()
negotiate_app = typer.Typer(name="negotiate", help="Let two members' agents negotiate who does which task.")
profile_app = typer.Typer(name="profile", help="Members' negotiation profiles (tasks held, private values).")
negotiate_app.add_typer(profile_app)
ANSWERS = {"accept": ApprovalDecision.APPROVED, "decline": ApprovalDecision.DENIED}


@negotiate_app.callback(invoke_without_command=True)
def negotiate(
    ctx: typer.Context,
    workspace: Annotated[Path | None, typer.Option(help="The local workspace file.")] = None,
    as_member: Annotated[str | None, typer.Option("--as", help="The member starting the negotiation.")] = None,
    with_member: Annotated[str | None, typer.Option("--with", help="The member to negotiate with.")] = None,
    answer: Annotated[str | None, typer.Option(help="Answer both approval prompts: accept or decline.")] = None,
    scripted: Annotated[bool, typer.Option(help="Scripted negotiators instead of the LLM (demos).")] = False,
) -> None:
    """Negotiate between --as and --with; the agreed trade waits for both members' Accept."""
    if ctx.invoked_subcommand is not None:
        return
    if workspace is None or as_member is None or with_member is None:
        raise NegotiationError("Give --workspace, --as and --with (or use `askwith negotiate profile load`).")
    if answer is not None and answer not in ANSWERS:
        raise typer.BadParameter("--answer must be accept or decline")
    settings = Settings.load()
    client_for = nullcontext(_scripted_client_for()) if scripted else _llm_client_for(settings)
    port = LocalWorkspace.load(workspace, approval_responder=_responder(answer))
    run(_negotiate(settings, port, client_for, as_member, with_member, scripted))


@profile_app.command("load")
def load(
    file: Annotated[Path, typer.Argument(help="A JSON file of member profiles.")],
    workspace: Annotated[Path, typer.Option(help="The local workspace file the members belong to.")],
) -> None:
    """Store members' negotiation profiles (replacing earlier ones)."""
    profiles = load_profiles_file(file)
    port = LocalWorkspace.load(workspace)

    async def store() -> int:
        db = await Database.open(Settings.load())
        try:
            return await load_profiles(db, port, profiles)
        finally:
            await db.close()

    out.print(f"stored {run(store())} negotiation profile(s)")


async def _negotiate(
    settings: Settings,
    port: LocalWorkspace,
    clients: AbstractAsyncContextManager[ClientFor],
    initiator: str,
    counterpart: str,
    scripted: bool,
) -> None:
    db = await Database.open(settings)
    try:
        async with clients as client_for:
            flow = MemberNegotiation(
                db, port, client_for, approval_timeout_s=settings.negotiation_approval_timeout_seconds
            )
            outcome = await flow.negotiate(initiator, counterpart)
    finally:
        await db.close()
    result = outcome.result
    if scripted:
        out.print(f"[yellow]{messages.SCRIPTED_NOTICE}[/yellow]")
    out.print(f"negotiation {outcome.negotiation_id}: {result.outcome.value} after {result.turns_played} turns")
    if result.agreed is not None:
        out.print(
            f"{result.proposer} gives {result.agreed.give or 'nothing'}, takes {result.agreed.take or 'nothing'}"
        )
    out.print(f"confirmation: {outcome.status}")


def _responder(answer: str | None):  # noqa: ANN202 - an ApprovalResponder
    terminal = asyncio.Lock()  # both members are asked at once; on one terminal, one prompt at a time

    async def respond(request: ApprovalRequest) -> ApprovalDecision:
        async with terminal:
            out.print(f"[bold]{request.member_id}[/bold]: {request.title}\n{request.body}")
            if answer is not None:
                return ANSWERS[answer]
            accepted = await asyncio.to_thread(typer.confirm, f"{request.member_id}, accept?", default=False)
        return ApprovalDecision.APPROVED if accepted else ApprovalDecision.DENIED

    return respond


def _scripted_client_for() -> ClientFor:
    return lambda scenario, agent: LLMClient(ScriptedBackend(ScriptedNegotiator(scenario, agent)))


@asynccontextmanager
async def _llm_client_for(settings: Settings) -> AsyncIterator[ClientFor]:
    # One client (and, with ASKWITH_LOCAL_LLM, one local server) for both members' agents.
    async with open_llm_client(settings) as client:

        def client_for(_scenario: Scenario, _agent: str) -> LLMClient:
            return client

        yield client_for


def register(app: typer.Typer) -> None:
    if not any(info.typer_instance is negotiate_app for info in app.registered_groups):
        app.add_typer(negotiate_app)
