"""The Slack Assistant side panel (bolt's `AsyncAssistant` middleware): suggested prompts when a thread starts, and
each message in the panel is the same ask as a DM, its stages on the panel's status line, the answer in the thread.

    app.use(build_assistant())
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAssistant
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import AsyncSetSuggestedPrompts

from adapters.slack import texts
from adapters.slack.chat_asks import ChatAsks, mention_text
from adapters.slack.services import services


ASSISTANT_EVENTS = ("assistant_thread_started", "assistant_thread_context_changed")  # what the manifest subscribes


async def thread_started(set_suggested_prompts: AsyncSetSuggestedPrompts) -> None:
    await set_suggested_prompts(prompts=texts.ASSISTANT_PROMPTS, title=texts.ASSISTANT_PROMPTS_TITLE)


async def thread_context_changed() -> None:
    """The panel's asks do not depend on the channel the member is viewing, so nothing is stored. (bolt's default
    listener would rewrite the thread's first bot message to hold the context, and fails on a text-only one.)"""


async def user_message(payload: dict[str, Any], context: AsyncBoltContext) -> None:
    svc = services(context)
    if svc.asks is None:
        return
    svc.saw_member_event(payload)
    text = mention_text(str(payload.get("text", "")), context.bot_user_id or "")
    thread_ts = str(payload["thread_ts"])
    ask = ChatAsks(svc).start(
        str(payload["user"]), text, str(payload["channel"]), str(payload["ts"]), thread_ts, assistant=True
    )
    svc.spawn(ask, audience=svc.audience_of(payload))


def build_assistant() -> AsyncAssistant:
    assistant = AsyncAssistant()
    assistant.thread_started(thread_started)
    assistant.thread_context_changed(thread_context_changed)
    assistant.user_message(user_message)
    return assistant
