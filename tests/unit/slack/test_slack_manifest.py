"""The shipped manifests ask for what each mode uses, by token type as Slack documents it: manifest.yml (internal app,
mirror memory) and manifest.marketplace.yml (Marketplace app, live memory). Their commands, scopes and events match
the install flows and the listeners; no bot scope is one Slack allows only for user tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from adapters.slack.assistant import ASSISTANT_EVENTS
from adapters.slack.install import USER_SCOPES
from adapters.slack.listeners.events import LISTENERS
from adapters.slack.memory_source import bot_events, member_scopes
from adapters.slack.oauth_app import install_scopes
from adapters.slack.thread_ask import SHORTCUT
from bot.settings import Settings
from tests.fakes.slack_api import BOT_SCOPES
from tests.fakes.slack_methods import SEARCH_SCOPE_TOKENS, scope_problems


ROOT = Path(__file__).parents[3]
INTERNAL = Settings(slack_app="internal", slack_memory="auto")
MARKETPLACE = Settings(slack_app="marketplace", slack_memory="auto", slack_distribution="oauth")


def _manifest(name: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / name).read_text())


@pytest.mark.parametrize(("name", "settings"), [("manifest.yml", INTERNAL), ("manifest.marketplace.yml", MARKETPLACE)])
def test_each_manifest_asks_for_what_its_mode_uses(name: str, settings: Settings) -> None:
    manifest = _manifest(name)
    commands = {c["command"]: c for c in manifest["features"]["slash_commands"]}
    assert set(commands) == {"/ask-with", "/askwith", "/negotiate"}
    assert all(c["should_escape"] and c["url"].endswith("/slack/events") for c in commands.values())
    scopes = manifest["oauth_config"]["scopes"]
    assert scope_problems("bot", scopes["bot"]) == []  # no user-only scope requested for the bot token
    assert scopes["bot"] == install_scopes(settings)  # what a workspace install asks for, in the manifest's order
    assert tuple(scopes["user"]) == member_scopes(settings)  # what `/askwith connect` asks a member for
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    # every event the listeners (and bolt's Assistant middleware) handle in this mode, and no other
    assert sorted(events) == sorted(bot_events(settings, (*LISTENERS, *ASSISTANT_EVENTS)))
    assert manifest["settings"]["interactivity"]["is_enabled"]
    assert manifest["features"]["shortcuts"][0]["callback_id"] == SHORTCUT


def test_internal_manifest_mirrors_and_requests_no_search_scope() -> None:
    scopes = _manifest("manifest.yml")["oauth_config"]["scopes"]
    assert set(scopes["bot"]) == set(BOT_SCOPES)  # the scopes the fake Slack API enforces per method
    assert tuple(scopes["user"]) == USER_SCOPES  # members' DMs, read with their own token
    assert not [s for s in scopes["bot"] + scopes["user"] if s.startswith("search:")]


def test_marketplace_manifest_scopes_follow_the_real_time_search_guide() -> None:
    manifest = _manifest("manifest.marketplace.yml")
    scopes = manifest["oauth_config"]["scopes"]
    # "search:read.public ... Bot, User"; ".private", ".mpim", ".im" ... "User": the bot holds public search only
    assert [s for s in scopes["bot"] if s.startswith("search:")] == ["search:read.public"]
    assert set(scopes["user"]) == {"search:read.public", "search:read.private", "search:read.im", "search:read.mpim"}
    assert all("user" in SEARCH_SCOPE_TOKENS[s] for s in scopes["user"])
    # askwith searches messages: no files or users search; no user `*:history` (the guide: an app asking for them
    # should not subscribe to message events) and no channel message feed (nothing is copied)
    assert not {"search:read.files", "search:read.users"} & set(scopes["bot"] + scopes["user"])
    assert not [s for s in scopes["user"] if s.endswith(":history")]
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert "message.im" in events and not {"message.channels", "message.groups", "message.mpim"} & set(events)
    # Marketplace rules: no Socket Mode; a long description saying which search is offered and the plan it needs
    assert manifest["settings"]["socket_mode_enabled"] is False
    about = manifest["display_information"]["long_description"]
    assert "keyword search" in about and "semantic search" in about and "Business+ or Enterprise+" in about
    assert 175 <= len(about) <= 4000  # Slack's bounds for a long description


def test_a_bot_scope_slack_allows_only_for_user_tokens_is_named() -> None:
    assert scope_problems("bot", ["search:read.public", "search:read.im"]) == [
        "search:read.im is not a bot-token scope"
    ]


def _justified(section: str) -> set[tuple[str, str]]:
    """(token type, scope) rows of one manifest's table in docs/slack-scopes.md."""
    page = (ROOT / "docs" / "slack-scopes.md").read_text()
    table = page.split(f"(`{section}`", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith(("| bot", "| user"))]
    return {(token.strip(), scope.strip().strip("`")) for token, scope in rows}


@pytest.mark.parametrize("name", ["manifest.yml", "manifest.marketplace.yml"])
def test_every_requested_scope_is_justified_in_the_scope_page(name: str) -> None:
    """Slack's submission form asks why each scope is needed: the page answers for exactly the scopes asked for."""
    scopes = _manifest(name)["oauth_config"]["scopes"]
    requested = {(token, scope) for token in ("bot", "user") for scope in scopes.get(token, [])}
    assert _justified(name) == requested
