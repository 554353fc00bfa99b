"""One ask, live, in the local web workspace: its progress (with Cancel) while the agents work, then the rich
answer (sources that open, who contributed, transcript link, 👍/👎) and a box for a follow-up in the same thread.

Only the member who asked (and admins of the workspace) may open an ask's page (`?format=json`: the same view as
JSON) and read its progress; only the member who asked acts on it: an admin reads another member's ask without its
votes, follow-up box or Cancel (what a follow-up would send is the asker's to ask). The colleagues read the
transcript instead (`/asks/{id}`), which keeps its own access rule. Every action goes through the core
(`AskService.cancel`, `record_feedback`, `submit` with `follow_up_of`), as Slack's and Discord's buttons do.
"""

from __future__ import annotations

from datetime import UTC

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from bot.asks import models
from bot.asks.control import CancelResult
from bot.asks.progress import read_progress
from bot.asks.read_models.jsonable import jsonable
from bot.asks.read_models.live_ask import FINISHED, load_ask_row, load_live_ask, waiting_approvals
from bot.errors import AskNotAllowedError, AskNotFoundError, AskRejectedError, LLMNotConfiguredError
from bot.texts import follow_up_texts, progress_texts
from bot.web import texts
from bot.web.access import Identity, may_follow
from bot.web.auth import config, db
from bot.web.local_runtime import LocalRuntime
from bot.web.render import page
from bot.web.routes.workspace import local_member
from bot.web.workspace_view import approvals_of, channels_of, places_of


NOTICE_KEY = "ask_notice"
NOTICE_MAX_CHARS = 500  # the session cookie carries it to the next page
VOTES = {"up": 1, "down": -1}


async def _own_ask(request: Request, *, acting: bool = False) -> tuple[Identity, LocalRuntime, models.Ask] | Response:
    """The ask of the page, when the signed-in member may follow it (`acting`: may act on it, as its requester)."""
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    ask_id = request.path_params["ask_id"]
    ask = await load_ask_row(db(request), ask_id)
    if ask is None or ask.workspace_id != identity.workspace_id:
        return page(request, "error.html", identity=identity, status_code=404, title=texts.NOT_FOUND_TITLE,
                    message=texts.not_found(f"ask #{ask_id}"))  # fmt: skip
    if not may_follow(identity, workspace_id=ask.workspace_id, requester=ask.requester):
        return page(request, "error.html", identity=identity, status_code=403, title=texts.FORBIDDEN_TITLE,
                    message=texts.NOT_YOUR_ASK)  # fmt: skip
    if acting and identity.member != ask.requester:
        return page(request, "error.html", identity=identity, status_code=403, title=texts.FORBIDDEN_TITLE,
                    message=texts.ASKERS_CONTROLS)  # fmt: skip
    return identity, local, ask


async def ask_page(request: Request) -> Response:
    found = await _own_ask(request)
    if isinstance(found, Response):
        return found
    identity, local, ask = found
    try:
        live = await load_live_ask(db(request), config(request).settings, local.port, ask, viewer=identity.member)
    except AskNotAllowedError as exc:  # the core's rule is the last word on what a viewer may see of an answer
        return page(request, "error.html", identity=identity, status_code=403, title=texts.FORBIDDEN_TITLE,
                    message=str(exc))  # fmt: skip
    if request.query_params.get("format") == "json":  # the same view, as JSON
        return JSONResponse(jsonable(live), headers={"Cache-Control": "no-store"})
    return page(
        request, "ask.html", identity=identity, ask=live, channel_id=None, mine=identity.member == ask.requester,
        channels=await channels_of(local.port, identity.platform_id), notice=request.session.pop(NOTICE_KEY, ""),
        approvals=approvals_of(local.port, identity.platform_id),
        places=await places_of(local.port, identity.platform_id),
    )  # fmt: skip


async def progress(request: Request) -> Response:
    """The ask's stage as JSON, for the page's status element (polled while the ask runs)."""
    found = await _own_ask(request)
    if isinstance(found, Response):
        return JSONResponse({"error": texts.NOT_YOUR_ASK}, status_code=found.status_code)
    _, _, ask = found
    now = await read_progress(db(request), ask.id)
    assert now is not None  # the ask was just read
    waiting = await waiting_approvals(db(request), ask)
    body = {
        # The ask row was read before its stage: an ask that ended in between has its final stage and, from it, its
        # final status (a final stage is named as the status it ends with), never "running" beside "finished".
        "status": now.stage.value if now.final else ask.status,
        "stage": now.stage.value,
        "text": now.text,
        "finished": ask.status in FINISHED or now.final,
        "waiting_for": [texts.waiting_for(w.name, w.deadline) for w in waiting],
        # The same, with where its deadline is in the text, for the page to show it in the member's zone.
        "deadlines": [
            {"at": texts.short_time(w.deadline), "datetime": w.deadline.astimezone(UTC).isoformat(timespec="seconds")}
            for w in waiting
        ],
    }
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


async def cancel(request: Request) -> Response:
    found = await _own_ask(request, acting=True)
    if isinstance(found, Response):
        return found
    identity, local, ask = found
    if local.asks is None:
        return _back(request, ask.id, str(LLMNotConfiguredError()))
    try:
        result = await local.asks.cancel(ask.id, by=identity.member)
    except (AskNotAllowedError, AskNotFoundError) as exc:
        return _back(request, ask.id, str(exc))
    notice = {
        CancelResult.CANCELLED: "",
        CancelResult.STOPPING: texts.CANCEL_STOPPING,
        CancelResult.FINISHED: progress_texts.cancel_too_late(ask.status),
    }[result]
    return _back(request, ask.id, notice)


async def feedback(request: Request) -> Response:
    found = await _own_ask(request, acting=True)
    if isinstance(found, Response):
        return found
    identity, local, ask = found
    vote = VOTES.get(str((await request.form()).get("vote", "")))
    if local.asks is None or vote is None:
        return _back(request, ask.id, follow_up_texts.feedback_invalid())
    try:
        stored = await local.asks.record_feedback(ask.id, identity.member, vote)
    except (AskRejectedError, AskNotAllowedError, AskNotFoundError) as exc:
        return _back(request, ask.id, str(exc))
    return _back(request, ask.id, follow_up_texts.feedback_thanks(stored), anchor="feedback")


async def follow_up(request: Request) -> Response:
    """Ask again in the same thread: the same colleagues, the earlier asks as context; opens the new ask's page."""
    found = await _own_ask(request, acting=True)
    if isinstance(found, Response):
        return found
    identity, local, ask = found
    text = str((await request.form()).get("text", "")).strip()
    reply = await local.follow_up(identity.platform_id, ask.id, text)
    if reply.ask_id is None:
        return _back(request, ask.id, reply.text, anchor="follow-up")
    return RedirectResponse(f"/workspace/asks/{reply.ask_id}", status_code=303)


def _back(request: Request, ask_id: int, notice: str, *, anchor: str = "") -> Response:
    """To the ask's page, with `notice` shown there once (kept in the session, never in the URL)."""
    if notice:
        request.session[NOTICE_KEY] = notice[:NOTICE_MAX_CHARS]
    return RedirectResponse(f"/workspace/asks/{ask_id}" + (f"#{anchor}" if anchor else ""), status_code=303)


routes = [
    Route("/workspace/asks/{ask_id:record_id}", ask_page, methods=["GET"]),
    Route("/workspace/asks/{ask_id:record_id}/progress", progress, methods=["GET"]),
    Route("/workspace/asks/{ask_id:record_id}/cancel", cancel, methods=["POST"]),
    Route("/workspace/asks/{ask_id:record_id}/feedback", feedback, methods=["POST"]),
    Route("/workspace/asks/{ask_id:record_id}/follow-up", follow_up, methods=["POST"]),
]
