"""Parsing the mentions a member types into `/ask-with`'s question, like Slack's `/ask-with @bob @carol …`.

Discord sends a picked user as `<@123>` (older clients `<@!123>`); typed text may also hold a plain `@bob`.
Leading mentions are the colleagues, the rest is the question. Syntax only: whether a colleague exists or takes
part is the core's decision.

    parse_ask("<@81> @carol when is the demo?")
    # ParsedAsk(colleagues=("81", "carol"), question="when is the demo?")
"""

from __future__ import annotations

import re
from dataclasses import dataclass


USER_MENTION = re.compile(r"^<@!?(\d+)>$")
PLAIN_MENTION = re.compile(r"^@([\w.\-]+)$")


@dataclass(frozen=True)
class ParsedAsk:
    colleagues: tuple[str, ...]  # platform ids (from <@id>) or handles (from @name), in order, without repeats
    question: str


def parse_ask(text: str) -> ParsedAsk:
    words = (text or "").split()
    colleagues: list[str] = []
    while words and (ref := _colleague(words[0])) is not None:
        if ref not in colleagues:
            colleagues.append(ref)
        words.pop(0)
    return ParsedAsk(tuple(colleagues), " ".join(words).strip())


def _colleague(word: str) -> str | None:
    if match := USER_MENTION.match(word):
        return match.group(1)
    if match := PLAIN_MENTION.match(word):
        return match.group(1)
    return None
