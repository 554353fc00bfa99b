"""The home page and "My conversations": every ask and negotiation the signed-in member took part in."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from bot.asks.read_models.ask_summaries import PAGE, asks_of_member
from bot.asks.read_models.negotiations import negotiations_of
from bot.web.auth import current_identity, db, require_identity
from bot.web.render import page


async def home(request: Request) -> Response:
    identity = await current_identity(request)
    if request.state.runtime.local is not None and (identity is None or identity.workspace_id == _local_id(request)):
        return RedirectResponse("/workspace", status_code=303)
    return RedirectResponse("/conversations", status_code=303)


async def my_conversations(request: Request) -> Response:
    identity = await require_identity(request)
    before = request.query_params.get("before", "")
    if before and not before.isdigit():
        raise HTTPException(400, "before must be an ask number")
    asks = await asks_of_member(db(request), identity.workspace_id, identity.member, before=int(before or 0) or None,
                                page=PAGE + 1)  # fmt: skip
    older = asks[PAGE - 1].id if len(asks) > PAGE else None  # one more than shown: there are older ones
    negotiations = [] if before else await negotiations_of(db(request), identity)
    return page(request, "conversations.html", identity=identity, asks=asks[:PAGE], negotiations=negotiations,
                older=older)  # fmt: skip


def _local_id(request: Request) -> int:
    return request.state.runtime.local.workspace_id


routes = [
    Route("/", home, methods=["GET"]),
    Route("/conversations", my_conversations, methods=["GET"]),
]
