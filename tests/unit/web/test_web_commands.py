"""The local composer's syntax: `/ask-with` (colleagues by handle or by full display name), `/askwith` settings, and
the fix offered for a mistyped command."""

from __future__ import annotations

import pytest

from bot.web.commands import (
    AskCommand,
    SettingsCommand,
    parse_ask_command,
    parse_settings_command,
    suggestion,
    unknown_command,
)


NAMES = {"bob okafor": "bob", "carol": "carol", "ana maria de souza": "ana", "ana maria": "amaria"}


def test_leading_mentions_are_colleagues_and_the_rest_is_the_question() -> None:
    assert parse_ask_command("/ask-with @bob @carol  when is the demo? @dave knows") == AskCommand(
        ("bob", "carol"), "when is the demo? @dave knows"
    )


def test_repeated_mentions_count_once_and_plain_messages_are_not_commands() -> None:
    assert parse_ask_command("/ASK-WITH @bob @bob hi").colleagues == ("bob",)  # type: ignore[union-attr]
    assert parse_ask_command("hello /ask-with @bob") is None
    assert parse_ask_command("") is None
    assert parse_ask_command("/ask-with") == AskCommand((), "")


def test_a_full_display_name_is_a_mention_so_the_question_does_not_start_with_the_surname() -> None:
    assert parse_ask_command("/ask-with @Bob Okafor when are you free?", NAMES) == AskCommand(
        ("bob",), "when are you free?"
    )
    assert parse_ask_command("/ask-with @bob okafor, @Carol: lunch?", NAMES) == AskCommand(("bob", "carol"), "lunch?")
    # The longest name that matches wins; a shorter one still matches when the longer does not.
    assert parse_ask_command("/ask-with @Ana Maria de Souza hi", NAMES) == AskCommand(("ana",), "hi")
    assert parse_ask_command("/ask-with @Ana Maria de Sousa hi", NAMES) == AskCommand(("amaria",), "de Sousa hi")
    # Only an exact name: "@Bob Oka" is the handle @Bob and a question that starts "Oka".
    assert parse_ask_command("/ask-with @Bob Oka when?", NAMES) == AskCommand(("Bob",), "Oka when?")
    assert parse_ask_command("/ask-with @Bob Okafor when?") == AskCommand(("Bob",), "Okafor when?")  # no names known


def test_askwith_is_the_settings_command() -> None:
    assert parse_settings_command("/askwith share ask") == SettingsCommand("share", "ask")
    assert parse_settings_command("  /ASKWITH exclude #general") == SettingsCommand("exclude", "#general")
    assert parse_settings_command("/askwith") == SettingsCommand("show", "")
    assert parse_settings_command("/askwith shre ask") == SettingsCommand("", "ask")
    assert parse_settings_command("/ask-with @bob hi") is None and parse_settings_command("askwith on") is None


def test_a_command_askwith_does_not_know_is_named() -> None:
    assert unknown_command("/ask") == "/ask" and unknown_command("/askwith-me @bob x") == "/askwith-me"
    for message in ("/ask-with @bob hi", "/ASK-WITH @bob hi", "/askwith share ask", "/usr/bin is full", "", "/ 2"):
        assert unknown_command(message) is None, message


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("/askwith shre ask", "/askwith share ask"),
        ("/askwith share aks", "/askwith share ask"),
        ("/askwith shar nevr", "/askwith share never"),
        ("/askwith exlude #general", "/askwith exclude #general"),
        ("/askwth on", "/askwith on"),
        ("/askwith @bob  when is it?", "/ask-with @bob when is it?"),  # settings take no colleague: an ask
        ("/askwith-me @bob x", "/ask-with @bob x"),
        ("/ask @bob x", "/ask-with @bob x"),
        ("/aks-with @bob x", "/ask-with @bob x"),
    ],
)
def test_a_mistyped_command_gets_the_closest_known_one(typed: str, meant: str) -> None:
    assert suggestion(typed) == meant


def test_nothing_is_suggested_when_nothing_is_wrong_or_nothing_is_close() -> None:
    for typed in ("/askwith share ask", "/ask-with @bob hi", "/askwith xyzzy", "/askwith exclude #nowhere", "hi"):
        assert suggestion(typed) is None, typed
