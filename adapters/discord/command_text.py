"""Parsing the mentions a member types into an ask: `/ask-with`'s question, a message mentioning the bot
(`@askwith ask @bob, @carol: when is the demo?`), a DM to the bot, or the "Ask about this thread" form.

Discord sends a picked user as `<@123>` (older clients `<@!123>`) and a role as `<@&456>`; typed text may also hold
a plain `@bob`. Leading mentions are the colleagues (punctuation after a mention, `<@123>,` or `@bob:`, is
allowed), the rest is the question; the bot's own mention and a leading "ask"/"ask with" are dropped. Syntax only:
whether a colleague exists or takes part is the core's decision.

    parse_ask("<@81>, @carol when is the demo?")
    # ParsedAsk(colleagues=("81", "carol"), roles=(), question="when is the demo?")
    parse_ask("<@900> ask <@&7> when?", bot_id="900")
    # ParsedAsk(colleagues=(), roles=("7",), question="when?")
"""

from __future__ import annotations

import re
from dataclasses import dataclass


TRAILING = ",;:.!?"
USER_MENTION = re.compile(r"^<@!?(\d+)>$")
ROLE_MENTION = re.compile(r"^<@&(\d+)>$")
PLAIN_MENTION = re.compile(r"^@([\w.\-]*\w)$")
ASK_WORDS = ("ask", "ask-with", "askwith")
WITH_WORDS = ("with",)


@dataclass(frozen=True)
class ParsedAsk:
    colleagues: tuple[str, ...]  # platform ids (from <@id>) or handles (from @name), in order, without repeats
    question: str
    roles: tuple[str, ...] = ()  # role ids (from <@&id>): every member of the role is a colleague


def parse_ask(text: str, *, bot_id: str | None = None) -> ParsedAsk:
    words = _split((text or "").strip())
    if bot_id is not None:
        words = [w for w in words if _user(w) != bot_id]  # "@askwith" wherever it was typed
    if words and words[0].lower().rstrip(TRAILING) in ASK_WORDS:
        words.pop(0)
        if words and words[0].lower() in WITH_WORDS:
            words.pop(0)
    colleagues: list[str] = []
    roles: list[str] = []
    while words:
        word = words[0].rstrip(TRAILING)
        if (role := _role(word)) is not None:
            _add(roles, role)
        elif (ref := _user(word) or _plain(word)) is not None:
            _add(colleagues, ref)
        elif word.lower() in ("and", "&") and (colleagues or roles) and len(words) > 1 and _mention(words[1]):
            pass  # "@bob and @carol when …"
        else:
            break
        words.pop(0)
    return ParsedAsk(tuple(colleagues), " ".join(words).strip(), tuple(roles))


def _mention(word: str) -> bool:
    word = word.rstrip(TRAILING)
    return bool(_user(word) or _role(word) or _plain(word))


def _add(found: list[str], ref: str) -> None:
    if ref not in found:
        found.append(ref)


def _split(text: str) -> list[str]:
    """Words, with `<@1><@2>` or `<@1>,<@2>` typed without a space counted as two."""
    return re.sub(r">([,;]?)(?=<[@#])", r">\1 ", text).split()


def _user(word: str) -> str | None:
    match = USER_MENTION.match(word.rstrip(TRAILING))
    return match.group(1) if match else None


def _role(word: str) -> str | None:
    match = ROLE_MENTION.match(word)
    return match.group(1) if match else None


def _plain(word: str) -> str | None:
    match = PLAIN_MENTION.match(word)
    return match.group(1) if match else None
