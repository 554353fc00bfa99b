from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from adapters.slack.listeners.events.message import message_callback


def register(app: AsyncApp) -> None:
    app.event("message")(message_callback)
