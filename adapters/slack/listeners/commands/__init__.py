from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from adapters.slack.listeners.commands.ask_with import ask_with_callback
from adapters.slack.listeners.commands.askwith_settings import askwith_settings_callback
from adapters.slack.listeners.commands.negotiate import negotiate_callback


def register(app: AsyncApp) -> None:
    app.command("/ask-with")(ask_with_callback)
    app.command("/askwith")(askwith_settings_callback)
    app.command("/negotiate")(negotiate_callback)
