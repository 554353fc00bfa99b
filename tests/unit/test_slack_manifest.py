"""The shipped manifest asks for what the app uses: its commands, the scopes the fake Slack API enforces per method,
the user scopes of the install flow, and the events the listeners handle."""

from __future__ import annotations

from pathlib import Path

import yaml

from adapters.slack.assistant import ASSISTANT_EVENTS
from adapters.slack.install import USER_SCOPES
from adapters.slack.listeners.events import LISTENERS
from adapters.slack.live_search import SEARCH_USER_SCOPES
from adapters.slack.memory_source import member_scopes
from adapters.slack.oauth_app import install_scopes
from adapters.slack.thread_ask import SHORTCUT
from bot.settings import Settings
from tests.fakes.slack_api import BOT_SCOPES
from tests.fakes.slack_search import SEARCH_SCOPES


MANIFEST = yaml.safe_load((Path(__file__).parents[2] / "manifest.yml").read_text())


def test_manifest_commands_scopes_and_events() -> None:
    commands = {c["command"]: c for c in MANIFEST["features"]["slash_commands"]}
    assert set(commands) == {"/ask-with", "/askwith", "/negotiate"}
    assert all(c["should_escape"] and c["url"].endswith("/slack/events") for c in commands.values())
    scopes = MANIFEST["oauth_config"]["scopes"]
    # the scopes the fake Slack API enforces per method, the search ones of live memory included
    assert set(scopes["bot"]) == set(BOT_SCOPES) | set(SEARCH_SCOPES)
    live, mirror = Settings(slack_memory="live"), Settings(slack_memory="mirror")
    assert scopes["bot"] == install_scopes(live)  # what a workspace install asks for, in the manifest's order
    assert set(install_scopes(mirror)) == set(BOT_SCOPES)  # an internal app asks for no search scope
    # `/askwith connect`: DMs always, the search scopes in live mode
    assert tuple(scopes["user"]) == (*USER_SCOPES, *member_scopes(live)) == (*USER_SCOPES, *SEARCH_USER_SCOPES)
    assert member_scopes(mirror) == ()
    settings = MANIFEST["settings"]
    assert settings["interactivity"]["is_enabled"]
    events = {e.split(".")[0] for e in settings["event_subscriptions"]["bot_events"]}
    # every event the listeners (and bolt's Assistant middleware) handle, and no other
    assert events == set(LISTENERS) | set(ASSISTANT_EVENTS)
    assert MANIFEST["features"]["shortcuts"][0]["callback_id"] == SHORTCUT
