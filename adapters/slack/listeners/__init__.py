"""Every Slack listener, registered by surface: the Assistant side panel, commands, actions, events, shortcuts.

`register_listeners` is the one place both apps (one workspace, `adapters.slack.app`; many by OAuth,
`adapters.slack.oauth_app`) get their listeners from, so a surface added here works in both modes."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from adapters.slack.assistant import build_assistant
from adapters.slack.listeners import actions, commands, events, shortcuts


def register_listeners(app: AsyncApp) -> None:
    """Register after the app's own middleware (services, redeliveries): the Assistant middleware must see the
    panel's threads before the DM listener does."""
    app.use(build_assistant())
    commands.register(app)
    actions.register(app)
    events.register(app)
    shortcuts.register(app)
