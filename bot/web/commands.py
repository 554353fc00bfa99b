"""What a member types in the local workspace's composer: a plain message, or `/ask-with @bob [@carol …] question`.

Anything else that starts like a command (`/askwith`, `/ask`, `/askwith-me`) is a typo, never a message: posting it
would put the question in front of the whole channel (`unknown_command`). Parsing is syntax only (leading @mentions
are the colleagues, the rest is the question); whether the colleagues exist and take part is the core's decision
(`AskService.validate`), exactly as for Slack and Discord.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


ASK_COMMAND = "/ask-with"
MENTION = re.compile(r"^@([\w.\-]+)$")
COMMAND_WORD = re.compile(r"^/[A-Za-z][\w\-]*$")  # "/askwith"; "/usr/bin is full" is a message


@dataclass(frozen=True)
class AskCommand:
    colleagues: tuple[str, ...]  # handles, as typed, without the @
    question: str


def parse_ask_command(text: str) -> AskCommand | None:
    """The ask in `text`, or None when `text` is not an `/ask-with` command."""
    words = text.strip().split()
    if not words or words[0].lower() != ASK_COMMAND:
        return None
    words.pop(0)
    colleagues: list[str] = []
    while words and (mention := MENTION.match(words[0])):
        if mention[1] not in colleagues:
            colleagues.append(mention[1])
        words.pop(0)
    return AskCommand(tuple(colleagues), " ".join(words))


def unknown_command(text: str) -> str | None:
    """The command word `text` starts with when it is not one askwith knows, else None."""
    words = text.strip().split(maxsplit=1)
    if not words or not COMMAND_WORD.match(words[0]) or words[0].lower() == ASK_COMMAND:
        return None
    return words[0]


def suggested_command(text: str) -> str:
    """`text` with its unknown command word replaced by `/ask-with`."""
    words = text.strip().split(maxsplit=1)
    return " ".join([ASK_COMMAND, *words[1:]])
