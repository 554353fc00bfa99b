from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from adapters.slack.listeners.events.app_home import app_home_opened_callback
from adapters.slack.listeners.events.app_lifecycle import (
    app_uninstalled_callback,
    team_join_callback,
    tokens_revoked_callback,
    user_change_callback,
)
from adapters.slack.listeners.events.app_mention import app_mention_callback
from adapters.slack.listeners.events.channel_lifecycle import archive_callback, deleted_callback, unarchive_callback
from adapters.slack.listeners.events.membership import (
    bot_left_callback,
    member_joined_channel_callback,
    member_left_channel_callback,
)
from adapters.slack.listeners.events.message import message_callback


# Every event askwith subscribes to (the manifest lists the same) and its listener.
LISTENERS = {
    "app_mention": app_mention_callback,  # `@askwith ask @bob …` in a channel or thread
    "app_home_opened": app_home_opened_callback,  # the App Home tab: settings, recent asks, what was shared
    "message": message_callback,  # messages.* events: new, changed, deleted, broadcasts, conversions
    "member_joined_channel": member_joined_channel_callback,
    "member_left_channel": member_left_channel_callback,
    "channel_left": bot_left_callback,
    "group_left": bot_left_callback,
    "channel_archive": archive_callback,
    "group_archive": archive_callback,
    "channel_unarchive": unarchive_callback,
    "group_unarchive": unarchive_callback,
    "channel_deleted": deleted_callback,
    "group_deleted": deleted_callback,
    "user_change": user_change_callback,
    "team_join": team_join_callback,
    "tokens_revoked": tokens_revoked_callback,
    "app_uninstalled": app_uninstalled_callback,
}


def register(app: AsyncApp) -> None:
    for event, callback in LISTENERS.items():
        app.event(event)(callback)
