"""`@askwith ask @bob @carol …` in a channel or thread (the word *ask* optional), and a DM to the bot: an ask
answered where it was asked (see `adapters.slack.chat_asks`)."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.chat_asks import ChatAsks, mention_text
from adapters.slack.services import services


async def app_mention_callback(event: dict[str, Any], context: AsyncBoltContext) -> None:
    await _ask_from(event, context)


def is_dm_to_bot(event: dict[str, Any], bot_user_id: str) -> bool:
    """A member's own new message in their DM with the bot (not the bot's posts, edits or deletions)."""
    return (
        event.get("channel_type") == "im"
        and not event.get("subtype")
        and not event.get("bot_id")
        and bool(event.get("user"))
        and event.get("user") != bot_user_id
    )


async def dm_ask(event: dict[str, Any], context: AsyncBoltContext) -> None:
    await _ask_from(event, context)


async def _ask_from(event: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.asks is None:
        return
    svc.saw_member_event(event)
    ts = str(event["ts"])
    thread_ts = event.get("thread_ts")
    thread_ts = str(thread_ts) if thread_ts and thread_ts != ts else None
    text = mention_text(str(event.get("text", "")), context.bot_user_id or "")
    # Checked and submitted after the event is acknowledged: the core's checks read the database.
    ask = ChatAsks(svc).start(str(event["user"]), text, str(event["channel"]), ts, thread_ts)
    svc.spawn(ask, audience=svc.audience_of(event))
