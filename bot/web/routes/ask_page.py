"""One ask, live, in the local web workspace: its progress (with Cancel) while the agents work, then the rich
answer (sources that open, who contributed, transcript link, 👍/👎) and a box for a follow-up in the same thread.

Only the member who asked (and admins of the workspace) may open an ask's page, its progress or act on it; the
colleagues read the transcript instead (`/asks/{id}`), which keeps its own access rule.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from bot.web import texts
from bot.web.access import Identity, may_follow
from bot.web.auth import db
from bot.web.records.live_ask import LiveAsk, load_live_ask
from bot.web.render import page
from bot.web.routes.workspace import local_member
from bot.web.workspace_view import channels_of


NOTICE_KEY = "ask_notice"
NOTICE_MAX_CHARS = 500  # the session cookie carries it to the next page


async def _own_ask(request: Request) -> tuple[Identity, LiveAsk] | Response:
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, _ = found
    ask_id = request.path_params["ask_id"]
    live = await load_live_ask(db(request), ask_id, viewer=identity.member)
    if live is None:
        return page(request, "error.html", identity=identity, status_code=404, title=texts.NOT_FOUND_TITLE,
                    message=texts.not_found(f"ask #{ask_id}"))  # fmt: skip
    if not may_follow(identity, workspace_id=live.workspace_id, requester=live.requester):
        return page(request, "error.html", identity=identity, status_code=403, title=texts.FORBIDDEN_TITLE,
                    message=texts.NOT_YOUR_ASK)  # fmt: skip
    return identity, live


async def ask_page(request: Request) -> Response:
    found = await _own_ask(request)
    if isinstance(found, Response):
        return found
    identity, live = found
    local = request.state.runtime.local
    return page(request, "ask.html", identity=identity, ask=live, channels=await channels_of(local.port,
                identity.platform_id), channel_id=None, notice=request.session.pop(NOTICE_KEY, ""))  # fmt: skip


async def progress(request: Request) -> Response:
    """The ask's stage as JSON, for the page's status element (polled while the ask runs)."""
    found = await _own_ask(request)
    if isinstance(found, Response):
        return JSONResponse({"error": texts.NOT_YOUR_ASK}, status_code=found.status_code)
    _, live = found
    body = {"status": live.status, "stage": live.stage, "text": live.progress_text, "finished": live.finished}
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


async def follow_up(request: Request) -> Response:
    """Ask again in the same thread: the same colleagues, the earlier asks as context; opens the new ask's page."""
    found = await _own_ask(request)
    if isinstance(found, Response):
        return found
    identity, live = found
    text = str((await request.form()).get("text", "")).strip()
    local = request.state.runtime.local
    reply = await local.follow_up(identity.platform_id, live.id, text)
    if reply.ask_id is None:
        request.session[NOTICE_KEY] = reply.text[:NOTICE_MAX_CHARS]  # shown once, by the page it returns to
        return RedirectResponse(f"/workspace/asks/{live.id}#follow-up", status_code=303)
    return RedirectResponse(f"/workspace/asks/{reply.ask_id}", status_code=303)


routes = [
    Route("/workspace/asks/{ask_id:record_id}", ask_page, methods=["GET"]),
    Route("/workspace/asks/{ask_id:record_id}/progress", progress, methods=["GET"]),
    Route("/workspace/asks/{ask_id:record_id}/follow-up", follow_up, methods=["POST"]),
]
