"""One ask's transcript, for its participants and admins only (403 for everyone else); `?format=json` gives the
same view as JSON. Whoever may follow the ask in the local workspace gets a link back to its page."""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bot.asks.read_models.ask_summaries import ask_and_summary
from bot.asks.read_models.transcript_page import load_transcript, transcript_json
from bot.web import texts
from bot.web.access import may_follow, may_open
from bot.web.auth import config, db, require_identity
from bot.web.render import page


log = logging.getLogger(__name__)


async def transcript(request: Request) -> Response:
    identity = await require_identity(request)
    ask_id = request.path_params["ask_id"]
    found = await ask_and_summary(db(request), ask_id)
    if found is None:
        return page(request, "error.html", identity=identity, status_code=404, title=texts.NOT_FOUND_TITLE,
                    message=texts.not_found(f"ask #{ask_id}"))  # fmt: skip
    ask, summary = found
    if not may_open(identity, workspace_id=summary.workspace_id, participants=summary.participants):
        return page(request, "error.html", identity=identity, status_code=403, title=texts.FORBIDDEN_TITLE,
                    message=texts.FORBIDDEN)  # fmt: skip
    # An admin from another workspace reads hits as nobody there: counts only.
    viewer = identity.member if identity.workspace_id == summary.workspace_id else ""
    raw_prompts = identity.is_admin and config(request).settings.admin_raw_prompts
    if raw_prompts:  # an explicit, off-by-default setting: every read of other members' internals is on record
        log.warning("admin %s read the raw prompts and agents' internals of ask #%s", identity.member or "?", ask_id)
    view = await load_transcript(
        db(request), ask_id, viewer=viewer, admin=identity.is_admin, raw_prompts=raw_prompts, ask=ask
    )
    assert view is not None  # the ask was just read
    if request.query_params.get("format") == "json":
        return JSONResponse(transcript_json(view), headers={"Cache-Control": "no-store"})
    local = request.state.runtime.local
    followable = (
        local is not None
        and local.workspace_id == summary.workspace_id
        and may_follow(identity, workspace_id=summary.workspace_id, requester=summary.requester)
    )
    ask_page = f"/workspace/asks/{ask_id}" if followable else None
    return page(request, "transcript.html", identity=identity, t=view, ask_page=ask_page)


routes = [Route("/asks/{ask_id:record_id}", transcript, methods=["GET"])]
