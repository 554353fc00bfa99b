from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from adapters.slack.blocks import APPROVE_ACTION, DENY_ACTION
from adapters.slack.listeners.actions.approval import approval_callback


def register(app: AsyncApp) -> None:
    app.action(APPROVE_ACTION)(approval_callback)
    app.action(DENY_ACTION)(approval_callback)
