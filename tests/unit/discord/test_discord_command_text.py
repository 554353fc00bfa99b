"""Parsing an ask typed to the Discord bot: mentions with punctuation, roles, the bot's own mention, "ask (with)"."""

from __future__ import annotations

import pytest

from adapters.discord.command_text import ParsedAsk, parse_ask
from adapters.discord.convert import readable


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<@81>, @carol when is the demo?", ParsedAsk(("81", "carol"), "when is the demo?")),
        ("<@9> ask <@&7> when?", ParsedAsk((), "when?", ("7",))),
        ("<@9> ask with <@1>,<@2>: hi <@3> there", ParsedAsk(("1", "2"), "hi <@3> there")),
        ("@bob: what?", ParsedAsk(("bob",), "what?")),
        ("<@!82> and <@83>; launch date?", ParsedAsk(("82", "83"), "launch date?")),
        ("<@9> and who told you?", ParsedAsk((), "and who told you?")),
        ("ask <@1> <@1> <@&5> <@&5> why", ParsedAsk(("1",), "why", ("5",))),
    ],
)
def test_parse_ask(text: str, expected: ParsedAsk) -> None:
    assert parse_ask(text, bot_id="9") == expected


def test_stored_text_keeps_names_beside_ids() -> None:
    text = "<@1>, <@!2> and <@&3>: ping <@4>"
    assert readable(text, {"1": "Bob", "2": "Carol"}, {"3": "design"}) == (
        "@Bob (<@1>), @Carol (<@!2>) and @design (<@&3>): ping <@4>"
    )
