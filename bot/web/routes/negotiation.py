"""One negotiation, shown like any conversation, for its two members and admins only."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot.asks.read_models.negotiations import load_negotiation
from bot.web import texts
from bot.web.access import may_open
from bot.web.auth import db, require_identity
from bot.web.render import page


async def negotiation(request: Request) -> Response:
    identity = await require_identity(request)
    negotiation_id = request.path_params["negotiation_id"]
    record = await load_negotiation(db(request), negotiation_id, viewer=identity)
    if record is None:
        return page(request, "error.html", identity=identity, status_code=404, title=texts.NOT_FOUND_TITLE,
                    message=texts.not_found(f"negotiation #{negotiation_id}"))  # fmt: skip
    if not may_open(identity, workspace_id=record["workspace_id"], participants=record["participants"]):
        return page(request, "error.html", identity=identity, status_code=403, title=texts.FORBIDDEN_TITLE,
                    message=texts.FORBIDDEN)  # fmt: skip
    return page(request, "negotiation.html", identity=identity, n=record)


routes = [Route("/negotiations/{negotiation_id:record_id}", negotiation, methods=["GET"])]
