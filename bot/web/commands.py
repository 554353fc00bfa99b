"""What a member types in the local workspace's composer: a plain message, `/ask-with @bob [@carol …] question`, or
`/askwith show|help|on|off|share auto|ask|never|exclude #channel|include #channel|timezone Europe/Paris` (their own
settings).

Anything else that starts like a command (`/ask`, `/askwith-me`) is a typo, never a message: posting it would put the
question in front of the whole channel (`unknown_command`); a typo gets the closest known command (`suggestion`).
Parsing is syntax only (leading @mentions are the colleagues, the rest is the question); whether the colleagues exist
and take part is the core's decision (`AskService.validate`), exactly as for Slack and Discord.

    parse_ask_command("/ask-with @Bob Okafor when are you free?", {"bob okafor": "bob"})
    # AskCommand(colleagues=("bob",), question="when are you free?")
    suggestion("/askwith shre ask")  # "/askwith share ask"
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot.platform.port import SharePolicy


ASK_COMMAND = "/ask-with"
SETTINGS_COMMAND = "/askwith"
COMMANDS = (ASK_COMMAND, SETTINGS_COMMAND)
SETTINGS_ACTIONS = ("show", "help", "on", "off", "share", "exclude", "include", "timezone")
SHARE_VALUES = tuple(policy.value for policy in SharePolicy)
MENTION = re.compile(r"^@([\w.\-]+)$")
COMMAND_WORD = re.compile(r"^/[A-Za-z][\w\-]*$")  # "/askwit"; "/usr/bin is full" is a message
TRAILING = ",;:"  # "@bob, @carol: when…" — punctuation after a mention is not part of it
CLOSE = 0.6  # difflib's similarity for a typo ("shre" ~ "share": 0.89; "xyz" ~ anything: below)


@dataclass(frozen=True)
class AskCommand:
    colleagues: tuple[str, ...]  # handles, without the @
    question: str


@dataclass(frozen=True)
class SettingsCommand:
    action: str  # one of SETTINGS_ACTIONS, or "" when the word after /askwith is not one
    argument: str  # "ask" of `share ask`, "#general" of `exclude #general`, "Europe/Paris" of `timezone Europe/Paris`


def parse_ask_command(text: str, names: Mapping[str, str] | None = None) -> AskCommand | None:
    """The ask in `text`, or None when `text` is not an `/ask-with` command. `names` maps a member's display name,
    case-folded, to their handle: "@Bob Okafor" is then a mention of @bob (the longest name that matches wins)."""
    words = text.strip().split()
    if not words or words[0].lower() != ASK_COMMAND:
        return None
    words.pop(0)
    colleagues: list[str] = []
    while words and (found := _mention(words, names or {})):
        handle, size = found
        if handle not in colleagues:
            colleagues.append(handle)
        del words[:size]
    return AskCommand(tuple(colleagues), " ".join(words))


def _mention(words: list[str], names: Mapping[str, str]) -> tuple[str, int] | None:
    """The handle the words start with, and how many words name it."""
    if not words[0].startswith("@"):
        return None
    longest = max((len(name.split()) for name in names), default=1)
    for size in range(min(longest, len(words)), 0, -1):
        typed = " ".join(words[:size])[1:].rstrip(TRAILING).casefold()
        if typed in names:
            return names[typed], size
    if match := MENTION.match(words[0].rstrip(TRAILING)):
        return match[1], 1
    return None


def parse_settings_command(text: str) -> SettingsCommand | None:
    """The settings command in `text`, or None when `text` is not `/askwith …`. A bare `/askwith` shows them."""
    words = text.strip().split(maxsplit=2)
    if not words or words[0].lower() != SETTINGS_COMMAND:
        return None
    action = words[1].lower() if len(words) > 1 else "show"
    return SettingsCommand(action if action in SETTINGS_ACTIONS else "", words[2] if len(words) > 2 else "")


def unknown_command(text: str) -> str | None:
    """The command word `text` starts with when it is not one askwith knows, else None."""
    words = text.strip().split(maxsplit=1)
    if not words or not COMMAND_WORD.match(words[0]) or words[0].lower() in COMMANDS:
        return None
    return words[0]


def suggestion(text: str) -> str | None:
    """What the member most likely meant, when `text` is a mistyped command: the closest known command word, then
    for `/askwith` the closest setting and share policy. None when nothing is close (or nothing is wrong)."""
    words = text.strip().split()
    if not words or not COMMAND_WORD.match(words[0]):
        return None
    rest = words[1:]
    command = words[0].lower()
    if command not in COMMANDS:
        # Colleagues named: an ask whatever the word was; else the closest command (an ask when none is close).
        close = [] if rest and rest[0].startswith("@") else difflib.get_close_matches(command, COMMANDS, 1, CLOSE)
        command = close[0] if close else ASK_COMMAND
    if command == SETTINGS_COMMAND and rest:
        if rest[0].startswith("@"):  # `/askwith @bob when…`: settings take no colleague, an ask does
            command = ASK_COMMAND
        else:
            rest = [_closest(rest[0], SETTINGS_ACTIONS), *rest[1:]]
            if rest[0] == "share" and len(rest) > 1:
                rest[1] = _closest(rest[1], SHARE_VALUES)
    fixed = " ".join([command, *rest])
    return fixed if fixed != " ".join(words) else None


def _closest(word: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word.lower(), known, 1, CLOSE)
    return close[0] if close else word
