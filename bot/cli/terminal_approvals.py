"""Approvals for `askwith ask`: a colleague whose policy is `ask` is asked right here, on this terminal.

With no terminal to ask on (stdin is not interactive: a script, CI, a pipe), nobody could ever answer, so the share
is declined at once with a line saying why and that `askwith serve` (the web workspace) takes approvals, instead of
a silent wait until ASKWITH_APPROVAL_TIMEOUT_SECONDS.

    port.approval_responder = terminal_responder(console, interactive=sys.stdin.isatty())
"""

from __future__ import annotations

import asyncio

import typer
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from adapters.local.workspace import ApprovalResponder
from bot.cli.printable import printable
from bot.platform.port import ApprovalDecision, ApprovalRequest


NOT_INTERACTIVE = (
    "{member}'s share policy is 'ask' and there is no terminal here to ask them on, so their agent shares nothing "
    "from their memory. To let members approve, run `askwith serve` and answer in the web workspace."
)


def terminal_responder(console: Console, *, interactive: bool) -> ApprovalResponder:
    terminal = asyncio.Lock()  # several colleagues may be asked at once; one prompt at a time on one terminal

    async def respond(request: ApprovalRequest) -> ApprovalDecision:
        async with terminal:
            if not interactive:
                console.print(NOT_INTERACTIVE.format(member=request.member_id), style="yellow", highlight=False)
                return ApprovalDecision.DENIED
            body = Text(printable(request.body))
            console.print(Panel(body, title=printable(f"{request.member_id}: {request.title}"), border_style="yellow"))
            allowed = await asyncio.to_thread(typer.confirm, f"{request.member_id}, share this?", default=False)
        return ApprovalDecision.APPROVED if allowed else ApprovalDecision.DENIED

    return respond
