"""The "Ask about this thread" message shortcut and its modal's submission."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.services import services
from adapters.slack.thread_ask import MODAL, SHORTCUT, open_thread_ask_modal, start_thread_ask


async def thread_shortcut_callback(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
    await ack()
    # The trigger_id expires 3 seconds after the click: the modal opens before anything slower happens.
    await open_thread_ask_modal(client, body)


async def thread_modal_callback(
    ack: AsyncAck, body: dict[str, Any], view: dict[str, Any], context: AsyncBoltContext
) -> None:
    await ack()  # closes the modal; the status message in the thread shows what happens next
    svc = services(context)
    svc.spawn(start_thread_ask(svc, body["user"]["id"], view))


def register(app: AsyncApp) -> None:
    app.shortcut(SHORTCUT)(thread_shortcut_callback)
    app.view(MODAL)(thread_modal_callback)
