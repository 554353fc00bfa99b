"""Buttons on an ask in a conversation: Cancel on its status message, 👍/👎 on its answer.

Only the asker (or an admin) may cancel; anyone else gets an ephemeral refusal. Votes come from whoever may see
the ask (the core checks). Each click is acknowledged first; the core's work runs after.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from logging import Logger
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.response import BoltResponse

from adapters.slack import texts
from adapters.slack.answer_blocks import GROUP_CANCEL_ACTION, VOTE_UP_ACTION
from adapters.slack.chat_asks import ChatAsks
from adapters.slack.services import SlackServices, services
from bot.asks.control import CancelResult
from bot.base.record_ids import record_id
from bot.errors import AskError
from bot.texts import follow_up_texts, progress_texts


async def ask_id_checked(action: dict[str, Any], next: Callable[[], Awaitable[None]]) -> BoltResponse | None:  # noqa: A002
    """Listener middleware of the Cancel and vote buttons: a value that is no ask id (forged: `abc`, 2**70) is a 400
    before anything runs, never a 500 or a task failing unseen."""
    if record_id(action.get("value")) is None:
        return BoltResponse(status=400, body="")
    await next()
    return None


async def cancel_callback(
    ack: AsyncAck, action: dict[str, Any], body: dict[str, Any], respond: AsyncRespond, context: AsyncBoltContext
) -> None:
    await ack()
    svc = services(context)
    svc.spawn(_cancel(svc, int(action["value"]), body["user"]["id"], respond))


async def _cancel(svc: SlackServices, ask_id: int, clicker: str, respond: AsyncRespond) -> None:
    try:
        result = await svc.asks.cancel(ask_id, by=clicker)
    except AskError as exc:  # not theirs to cancel, or unknown
        await respond(text=texts.cancel_refused(str(exc)), response_type="ephemeral", replace_original=False)
        return
    if result == CancelResult.FINISHED:
        ask = await svc.asks.load(ask_id)
        await respond(
            text=progress_texts.cancel_too_late(ask.status), response_type="ephemeral", replace_original=False
        )
    elif result == CancelResult.STOPPING:
        await respond(text=texts.cancel_requested(), response_type="ephemeral", replace_original=False)


async def vote_callback(
    ack: AsyncAck,
    action: dict[str, Any],
    body: dict[str, Any],
    respond: AsyncRespond,
    context: AsyncBoltContext,
    logger: Logger,
) -> None:
    await ack()
    svc = services(context)
    vote = 1 if action["action_id"] == VOTE_UP_ACTION else -1
    svc.spawn(_vote(svc, int(action["value"]), body["user"]["id"], vote, respond))


async def _vote(svc: SlackServices, ask_id: int, member: str, vote: int, respond: AsyncRespond) -> None:
    try:
        stored = await svc.asks.record_feedback(ask_id, member, vote)
    except AskError as exc:
        await respond(text=str(exc), response_type="ephemeral", replace_original=False)
        return
    await respond(text=follow_up_texts.feedback_thanks(stored), response_type="ephemeral", replace_original=False)


async def transcript_callback(ack: AsyncAck) -> None:
    """The Transcript button is a link Slack opens itself; the click still has to be acknowledged."""
    await ack()


async def group_confirm_callback(
    ack: AsyncAck, action: dict[str, Any], body: dict[str, Any], respond: AsyncRespond, context: AsyncBoltContext
) -> None:
    await ack()
    svc = services(context)
    if action["action_id"] == GROUP_CANCEL_ACTION:
        await respond(text=texts.group_not_asked(), response_type="ephemeral", replace_original=True)
        return
    request = json.loads(action["value"])
    await respond(text=texts.status_starting(), replace_original=True)
    start = ChatAsks(svc).start(
        body["user"]["id"], request["t"], request["c"], request["ts"], request["th"], confirmed=True
    )
    svc.spawn(start)
