"""The local web workspace: read channels and DMs, post as the signed-in member, `/ask-with`, `/askwith` (the
member's own settings), approve or deny shares.

`/ask-with` goes through `AskService.submit`, the same core path as Slack's command; the process's ask worker runs
the ask and askwith posts the answer into the member's DM, which this page shows as it arrives (a tiny polling
script reloads the message list; without JavaScript the page still works, it just needs a reload). Whatever the
composer refuses (a typo'd command, a question over the cap, an unknown colleague) comes back as the page again, the
text still in the box and, when a command is close, a one-click "Did you mean …?" (`?draft=` fills the box)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from bot.asks.read_models.dm_answers import dm_answers
from bot.consent.pending import ApprovalStore
from bot.platform.port import ApprovalDecision
from bot.store.db import Database
from bot.web import texts
from bot.web.access import Identity
from bot.web.auth import config, db, require_identity
from bot.web.commands import ASK_COMMAND, parse_ask_command, parse_settings_command, suggestion, unknown_command
from bot.web.local_runtime import LocalRuntime
from bot.web.render import page
from bot.web.settings_command import SettingRefused, run_settings
from bot.web.workspace_view import (
    answer_posts,
    approvals_of,
    can_read,
    channels_of,
    ephemerals_of,
    example_ask,
    mention_names,
    mentionable,
    messages_of,
    places_of,
    timeline,
    unread_counts,
)


SEEN_KEY = "seen"  # session: conversation -> how many messages from others it held when last shown
MAX_DRAFT = 20_000  # a `?draft=` longer than any question askwith takes is cut there

DECISIONS = {
    "approve": ApprovalDecision.APPROVED,
    "approve_all": ApprovalDecision.APPROVED_ALL,  # everything the agent says in this ask
    "deny": ApprovalDecision.DENIED,
}


async def local_member(request: Request) -> tuple[Identity, LocalRuntime] | Response:
    identity = await require_identity(request)
    local: LocalRuntime | None = request.state.runtime.local
    if local is None or identity.workspace_id != local.workspace_id:
        return page(request, "error.html", identity=identity, status_code=404, title=texts.NOT_FOUND_TITLE,
                    message=texts.NO_LOCAL_WORKSPACE)  # fmt: skip
    return identity, local


def no_such_conversation(request: Request, identity: Identity) -> Response:
    """One answer for a conversation that does not exist and for one the member is not in: the same status and the
    same words, so an address like /workspace/D-alice-carol tells a non-member nothing."""
    return page(request, "error.html", identity=identity, status_code=404, title=texts.NOT_FOUND_TITLE,
                message=texts.NO_SUCH_CONVERSATION)  # fmt: skip


async def workspace_home(request: Request) -> Response:
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    channels = await channels_of(local.port, identity.platform_id)
    return RedirectResponse(f"/workspace/{channels[0].id}", status_code=303)


async def channel_page(request: Request) -> Response:
    return await _channel(request, "workspace.html")


async def channel_feed(request: Request) -> Response:
    return await _channel(request, "_feed.html")


async def _channel(request: Request, template: str) -> Response:
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    channel_id = request.path_params["channel_id"]
    if not can_read(local.port, identity.platform_id, channel_id):
        return no_such_conversation(request, identity)
    # `?draft=` fills the message box: a suggested fix is one link away, with or without JavaScript.
    draft = request.query_params.get("draft", "")[:MAX_DRAFT]
    return page(request, template, **await _channel_context(request, identity, local, channel_id, draft=draft))


async def _channel_context(
    request: Request, identity: Identity, local: LocalRuntime, channel_id: str, *, draft: str = "", fix: str = ""
) -> dict[str, Any]:
    channels = await channels_of(local.port, identity.platform_id)
    messages = messages_of(local.port, channel_id)
    in_bot_dm = channel_id == channels[0].id
    seen = dict(request.session.get(SEEN_KEY) or {})
    unread = unread_counts(local.port.world, identity.platform_id, channels, seen, channel_id)
    request.session[SEEN_KEY] = seen
    answers = {}
    if in_bot_dm:
        answers = await dm_answers(db(request), config(request).settings, local.port, answer_posts(messages),
                                   viewer=identity.member, workspace_id=local.workspace_id)  # fmt: skip
    return dict(
        identity=identity, channel_id=channel_id, channels=channels, answers=answers,
        conversation=next(c for c in channels if c.id == channel_id), unread=unread,
        places=await places_of(local.port, identity.platform_id) if answers else None,
        feed=timeline(messages, ephemerals_of(local.port, identity.platform_id, channel_id)),
        example_ask=example_ask(local.port.world, identity.platform_id) if in_bot_dm and not messages else None,
        approvals=approvals_of(local.port, identity.platform_id), draft=draft, fix=fix,
        mentionable=mentionable(local.port.world, identity.platform_id),
        question_cap=config(request).settings.max_question_chars,
    )  # fmt: skip


async def post_message(request: Request) -> Response:
    """Post, ask or change a setting. Whatever is refused comes back on the page with the text still in the box (and
    the fix, when one is close), never cleared."""
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    channel_id = request.path_params["channel_id"]
    if not can_read(local.port, identity.platform_id, channel_id):
        return no_such_conversation(request, identity)
    text = str((await request.form()).get("text", "")).strip()
    if not text:
        return RedirectResponse(f"/workspace/{channel_id}", status_code=303)
    composed = await _compose(request, local, identity.platform_id, channel_id, text)
    if composed.refused:
        context = await _channel_context(request, identity, local, channel_id, draft=text, fix=composed.fix or "")
        return page(request, "workspace.html", status_code=422, **context)
    return RedirectResponse(composed.target or f"/workspace/{channel_id}", status_code=303)


@dataclass(frozen=True)
class Composed:
    target: str | None = None  # the ask's live page, where the member follows it
    refused: bool = False
    fix: str | None = None  # the command the member most likely meant


async def _compose(request: Request, local: LocalRuntime, member_id: str, channel_id: str, text: str) -> Composed:
    """Post the message, change the setting or submit the ask, with a note to the member of what happened."""

    async def note(words: str) -> None:
        await local.port.post_ephemeral(channel_id, member_id, words)

    if word := unknown_command(text):  # a typo of a command: posting it would show the question to the channel
        fix = suggestion(text) or ASK_COMMAND
        await note(texts.unknown_command(word, fix))
        return Composed(refused=True, fix=fix)
    if (setting := parse_settings_command(text)) is not None:
        fix = suggestion(text)
        if not setting.action:
            await note(texts.not_a_setting(" ".join(text.split()[:2]), fix))
            return Composed(refused=True, fix=fix)
        try:
            reply = await run_settings(
                db(request), local.port, member_id, setting, workspace_zone=config(request).settings.timezone
            )
        except SettingRefused as exc:
            await note(str(exc) if fix is None else texts.not_a_setting(" ".join(text.split()), fix))
            return Composed(refused=True, fix=fix)
        await note(f"{_echo(text)}\n{reply}")
        return Composed()
    command = parse_ask_command(text, mention_names(local.port.world))
    if command is None:
        await local.post(member_id, channel_id, text)
        return Composed()
    if not command.colleagues and not command.question:
        await note(texts.ASK_USAGE)
        return Composed(refused=True)
    reply = await local.ask(member_id, list(command.colleagues), command.question)
    await note(f"{_echo(text)}\n{reply.text}")
    if not reply.ok:  # too long, unknown colleague, no model: the member edits and sends again
        return Composed(refused=True)
    return Composed(f"/workspace/asks/{reply.ask_id}" if reply.ask_id is not None else None)


def _echo(text: str) -> str:
    """What the member sent, as the first line of a note (the page folds it when it is long)."""
    return " ".join(text.split())


async def dismiss_note(request: Request) -> Response:
    """An "only visible to you" note, gone for good (only the member it was for can dismiss it)."""
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    local.port.dismiss_ephemeral(identity.platform_id, request.path_params["note_id"])
    back = str((await request.form()).get("back", ""))
    return RedirectResponse(back if back.startswith("/workspace/") else "/workspace", status_code=303)


async def decide(request: Request) -> Response:
    found = await local_member(request)
    if isinstance(found, Response):
        return found
    identity, local = found
    form = await request.form()
    approval_id = request.path_params["approval_id"]
    decision = DECISIONS.get(str(form.get("decision", "")))
    decided = decision is not None and await decide_approval(
        db(request), local, approval_id, decision, member_id=identity.platform_id
    )
    back = str(form.get("back", ""))
    back = back if back.startswith(("/workspace/", "/settings")) else "/workspace"
    if decided and decision is not None:  # a clear confirmation on the page the member comes back to
        back += ("&" if "?" in back else "?") + f"decided={decision.value}"
    return RedirectResponse(back, status_code=303)


async def decide_approval(
    db: Database, local: LocalRuntime, approval_id: str, decision: ApprovalDecision, *, member_id: str
) -> bool:
    """Only the member the approval asks may answer it. The decision is stored first (durable: whichever worker runs
    the ask reads it, after a restart too), then the waiting prompt in this process is woken."""
    stored = await ApprovalStore(db).decide(approval_id, decision, member_id=member_id)
    prompt = local.port.pending_approvals.get(approval_id)
    if prompt is not None and prompt.member_id == member_id:
        return local.port.decide(approval_id, decision) or stored
    return stored


routes = [
    Route("/workspace", workspace_home, methods=["GET"]),
    Route("/workspace/{channel_id}", channel_page, methods=["GET"]),
    Route("/workspace/{channel_id}/feed", channel_feed, methods=["GET"]),
    Route("/workspace/{channel_id}", post_message, methods=["POST"]),
    Route("/workspace/approvals/{approval_id}", decide, methods=["POST"]),
    Route("/workspace/notes/{note_id}/dismiss", dismiss_note, methods=["POST"]),
]
