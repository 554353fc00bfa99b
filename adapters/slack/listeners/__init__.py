"""Every Slack listener, registered by surface: commands, actions, events."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from adapters.slack.listeners import actions, commands, events, shortcuts


def register_listeners(app: AsyncApp) -> None:
    commands.register(app)
    actions.register(app)
    events.register(app)
    shortcuts.register(app)
