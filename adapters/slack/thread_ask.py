"""The "Ask about this thread" message shortcut: a modal (colleagues + question), then an ask with the thread's
text as its context, answered in that thread.

    await open_thread_ask_modal(client, body)     # the shortcut: views.open with its trigger_id
    await start_thread_ask(svc, body, view)        # the modal submitted

Only what the requester can see goes into the context: Slack offers the shortcut only on messages the member sees,
and the submission is refused unless the member is in the conversation (a private channel's thread read by the bot
never reaches someone outside it).
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import texts
from adapters.slack.chat_asks import ChatAsks
from adapters.slack.convert import message_id, readable, ts_to_datetime
from bot.asks.service import AskRequest
from bot.errors import AskRejectedError, ChatPlatformError, PlatformRateLimitedError
from bot.store.stored_threads import stored_thread
from bot.texts import chat_texts


if TYPE_CHECKING:
    from adapters.slack.services import SlackServices


log = logging.getLogger(__name__)
SHORTCUT = "askwith_ask_thread"
MODAL = "askwith_ask_thread_modal"
MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
COLLEAGUES_BLOCK, COLLEAGUES_ACTION = "colleagues", "users"
QUESTION_BLOCK, QUESTION_ACTION = "question", "text"
THREAD_REPLIES_KEPT = 200  # a long thread's newest replies make the context (its text is cut to the newest anyway)


def thread_ask_modal(channel_id: str, thread_ts: str) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": MODAL,
        "private_metadata": json.dumps({"channel": channel_id, "thread_ts": thread_ts}),
        "title": {"type": "plain_text", "text": chat_texts.ASK_ABOUT_THREAD},
        "submit": {"type": "plain_text", "text": texts.THREAD_ASK_SUBMIT},
        "blocks": [
            {
                "type": "input",
                "block_id": COLLEAGUES_BLOCK,
                "label": {"type": "plain_text", "text": texts.THREAD_ASK_COLLEAGUES},
                "element": {"type": "multi_users_select", "action_id": COLLEAGUES_ACTION, "max_selected_items": 5},
            },
            {
                "type": "input",
                "block_id": QUESTION_BLOCK,
                "label": {"type": "plain_text", "text": texts.THREAD_ASK_QUESTION},
                "element": {"type": "plain_text_input", "action_id": QUESTION_ACTION, "multiline": True},
            },
        ],
    }


async def open_thread_ask_modal(client: AsyncWebClient, body: dict[str, Any]) -> None:
    message = body.get("message", {})
    thread_ts = message.get("thread_ts") or message["ts"]
    await client.views_open(trigger_id=body["trigger_id"], view=thread_ask_modal(body["channel"]["id"], thread_ts))


def submitted(view: dict[str, Any]) -> tuple[str, str, list[str], str]:
    """(channel id, thread ts, colleague ids, question) of a submitted modal."""
    meta = json.loads(view.get("private_metadata") or "{}")
    values = view["state"]["values"]
    colleagues = values[COLLEAGUES_BLOCK][COLLEAGUES_ACTION].get("selected_users") or []
    question = (values[QUESTION_BLOCK][QUESTION_ACTION].get("value") or "").strip()
    return meta["channel"], meta["thread_ts"], colleagues, question


async def start_thread_ask(svc: SlackServices, user_id: str, view: dict[str, Any]) -> int | None:
    channel_id, thread_ts, colleagues, question = submitted(view)
    asks = ChatAsks(svc)
    try:
        context = await thread_context(svc, user_id, channel_id, thread_ts)
    except ChatPlatformError as exc:
        log.info("thread %s:%s not read for %s: %s", channel_id, thread_ts, user_id, exc)
        await asks.tell(user_id, channel_id, texts.thread_not_readable(), thread_ts)
        return None
    if context is None:
        await asks.tell(user_id, channel_id, texts.thread_not_yours(), thread_ts)
        return None
    thread_id = message_id(channel_id, thread_ts)
    request = AskRequest(
        user_id, colleagues, question, origin_channel_id=channel_id, origin_thread_id=thread_id, context=context
    )
    try:
        ask_id = await svc.submit(request)
    except AskRejectedError as exc:
        await asks.tell(user_id, channel_id, str(exc), thread_ts)
        return None
    svc.spawn(asks.follow(ask_id, channel_id, thread_id, user_id))
    return ask_id


async def thread_context(svc: SlackServices, user_id: str, channel_id: str, thread_ts: str) -> str | None:
    """The thread as "Name: text" lines, parent first, then its newest replies; None when the member is not in the
    conversation."""
    channel = await svc.port.lookup_channel(channel_id)
    if channel is None or user_id not in channel.member_ids:
        return None
    said, left_out, names = await thread_said(svc, channel_id, thread_ts)
    lines = [f"{names.get(author, author)}: {text}" for author, text in said]
    if left_out:
        lines.insert(1, f"({left_out} earlier replies not read)")
    return "\n".join(lines)


async def thread_said(
    svc: SlackServices, channel_id: str, thread_ts: str
) -> tuple[list[tuple[str, str]], int, dict[str, str]]:
    """(author id, text with readable mentions) of the parent and the newest `THREAD_REPLIES_KEPT` replies, how many
    older replies were left out, and the display names of the authors and mentioned members (each looked up once).

    Slack returns a thread's replies oldest first, one page at a time; an app held to the 2025 limits gets 15 a minute.
    So Slack's page gives the parent and the oldest replies, and when the thread goes on, the newer replies come from
    the mirror, which events keep current. When the page must wait too long behind paced reads (a backfill holds the
    minute), the mirror's copy answers alone if it holds the thread."""
    parent_id = message_id(channel_id, thread_ts)
    try:
        page, more = await svc.port.thread_messages(channel_id, thread_ts)
    except PlatformRateLimitedError:
        stored = await stored_thread(svc.db, await svc.workspace(), parent_id)
        if stored.parent is None:
            raise
        page, more = [], False
    else:
        after = ts_to_datetime(page[-1]["ts"]) if page else None
        stored = await stored_thread(svc.db, await svc.workspace(), parent_id, after=after) if more else None
    mentioned = {m.group(1) for msg in page for m in MENTION.finditer(str(msg.get("text", "")))}
    names = await _display_names(svc, mentioned, {})
    said = [(str(m.get("user", "")), readable(str(m.get("text", "")), names)) for m in page]
    if stored is not None:  # the mirror's text already carries readable mentions
        said += [(m.author_id, m.text) for m in (stored.messages if not page else stored.replies)]
    parent, replies = said[:1], said[1:]
    kept = replies[-THREAD_REPLIES_KEPT:]
    authors = {author for author, _ in parent + kept if author.startswith(("U", "W"))}
    return parent + kept, len(replies) - len(kept), await _display_names(svc, authors, names)


async def _display_names(svc: SlackServices, member_ids: set[str], known: dict[str, str]) -> dict[str, str]:
    """`known` plus the display names of `member_ids` it lacks, one `users.info` each; a member Slack no longer knows
    keeps no name."""
    names = dict(known)
    for member_id in member_ids - known.keys():
        member = await svc.port.lookup_member(member_id)
        if member is not None:
            names[member_id] = member.display_name
    return names
