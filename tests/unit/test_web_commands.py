"""The local composer's `/ask-with` syntax."""

from __future__ import annotations

from bot.web.commands import AskCommand, parse_ask_command, suggested_command, unknown_command


def test_leading_mentions_are_colleagues_and_the_rest_is_the_question() -> None:
    assert parse_ask_command("/ask-with @bob @carol  when is the demo? @dave knows") == AskCommand(
        ("bob", "carol"), "when is the demo? @dave knows"
    )


def test_repeated_mentions_count_once_and_plain_messages_are_not_commands() -> None:
    assert parse_ask_command("/ASK-WITH @bob @bob hi").colleagues == ("bob",)  # type: ignore[union-attr]
    assert parse_ask_command("hello /ask-with @bob") is None
    assert parse_ask_command("") is None
    assert parse_ask_command("/ask-with") == AskCommand((), "")


def test_a_command_askwith_does_not_know_is_named_and_corrected() -> None:
    assert unknown_command("  /askwith @bob when?") == "/askwith"
    assert unknown_command("/ask") == "/ask" and unknown_command("/askwith-me @bob x") == "/askwith-me"
    assert suggested_command("/askwith @bob  when is it?") == "/ask-with @bob  when is it?"
    for message in ("/ask-with @bob hi", "/ASK-WITH @bob hi", "/usr/bin is full", "hello /askwith", "/ 2", ""):
        assert unknown_command(message) is None, message
