from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from adapters.slack.answer_blocks import (
    CANCEL_ACTION,
    GROUP_CANCEL_ACTION,
    GROUP_CONFIRM_ACTION,
    TRANSCRIPT_ACTION,
    VOTE_DOWN_ACTION,
    VOTE_UP_ACTION,
)
from adapters.slack.app_home import HOME_ACTIONS
from adapters.slack.blocks import APPROVE_ACTION, APPROVE_ALL_ACTION, DENY_ACTION
from adapters.slack.listeners.actions.approval import approval_callback
from adapters.slack.listeners.actions.ask_controls import (
    ask_id_checked,
    cancel_callback,
    group_confirm_callback,
    transcript_callback,
    vote_callback,
)
from adapters.slack.listeners.events.app_home import home_action_callback


def register(app: AsyncApp) -> None:
    app.action(APPROVE_ACTION)(approval_callback)
    app.action(APPROVE_ALL_ACTION)(approval_callback)
    app.action(DENY_ACTION)(approval_callback)
    app.action(CANCEL_ACTION, middleware=[ask_id_checked])(cancel_callback)
    app.action(VOTE_UP_ACTION, middleware=[ask_id_checked])(vote_callback)
    app.action(VOTE_DOWN_ACTION, middleware=[ask_id_checked])(vote_callback)
    app.action(TRANSCRIPT_ACTION)(transcript_callback)
    app.action(GROUP_CONFIRM_ACTION)(group_confirm_callback)
    app.action(GROUP_CANCEL_ACTION)(group_confirm_callback)
    for action_id in HOME_ACTIONS:
        app.action(action_id)(home_action_callback)
