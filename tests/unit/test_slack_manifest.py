"""The shipped manifest asks for what the app uses: its commands, the scopes the fake Slack API enforces per method,
the user scopes of the install flow, and the events the listeners handle."""

from __future__ import annotations

from pathlib import Path

import yaml

from adapters.slack.assistant import ASSISTANT_EVENTS
from adapters.slack.install import USER_SCOPES
from adapters.slack.listeners.events import LISTENERS
from adapters.slack.oauth_app import BOT_SCOPES as INSTALL_SCOPES
from adapters.slack.thread_ask import SHORTCUT
from tests.fakes.slack_api import BOT_SCOPES


MANIFEST = yaml.safe_load((Path(__file__).parents[2] / "manifest.yml").read_text())


def test_manifest_commands_scopes_and_events() -> None:
    commands = {c["command"]: c for c in MANIFEST["features"]["slash_commands"]}
    assert set(commands) == {"/ask-with", "/askwith", "/negotiate"}
    assert all(c["should_escape"] and c["url"].endswith("/slack/events") for c in commands.values())
    assert set(MANIFEST["oauth_config"]["scopes"]["bot"]) == set(BOT_SCOPES)
    assert list(MANIFEST["oauth_config"]["scopes"]["bot"]) == INSTALL_SCOPES  # what a workspace install asks for
    assert tuple(MANIFEST["oauth_config"]["scopes"]["user"]) == USER_SCOPES
    settings = MANIFEST["settings"]
    assert settings["interactivity"]["is_enabled"]
    events = {e.split(".")[0] for e in settings["event_subscriptions"]["bot_events"]}
    # every event the listeners (and bolt's Assistant middleware) handle, and no other
    assert events == set(LISTENERS) | set(ASSISTANT_EVENTS)
    assert MANIFEST["features"]["shortcuts"][0]["callback_id"] == SHORTCUT
