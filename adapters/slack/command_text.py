"""Parsing what members type after `/ask-with` and `/askwith`.

Slack sends user mentions as `<@U123|bob>` (or `<@U123>`) when the command escapes them, and plain `@bob` when it
does not; channels as `<#C123|general>`. Parsing is syntax only: whether a colleague exists or takes part is the
core's decision.

    parse_ask("<@U1|bob> @carol  when is the demo?")
    # ParsedAsk(colleagues=(Colleague("U1", "bob"), Colleague(None, "carol")), question="when is the demo?")
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.platform.port import SharePolicy


USER_MENTION = re.compile(r"^<@([UW][A-Z0-9]+)(?:\|([^>]*))?>$")
PLAIN_MENTION = re.compile(r"^@([\w\-]+(?:\.[\w\-]+)*)\.?$")
CHANNEL_MENTION = re.compile(r"^<#([CGD][A-Z0-9]+)(?:\|([^>]*))?>$")
INLINE_USER_MENTION = re.compile(r"<@([UW][A-Z0-9]+)\|([^>]*)>")


@dataclass(frozen=True)
class Colleague:
    member_id: str | None  # the platform id when Slack escaped the mention
    name: str | None  # the handle as typed (`bob` of `@bob`), when known

    @property
    def ref(self) -> str:
        """What the core resolves: the platform id if known, else the handle."""
        return self.member_id or self.name or ""

    @property
    def label(self) -> str:
        """How to show this colleague in Slack: a mention renders as their current name."""
        return f"<@{self.member_id}>" if self.member_id else f"@{self.name}"


@dataclass(frozen=True)
class ParsedAsk:
    colleagues: tuple[Colleague, ...]
    question: str
    wants_help: bool = False


def parse_ask(text: str) -> ParsedAsk:
    """Leading mentions are the colleagues; the rest is the question (inner mentions kept, shown as @handle)."""
    stripped = (text or "").strip()
    if stripped.lower() in ("", "help", "-h", "--help", "?"):  # a bare `/ask-with` gets the usage too
        return ParsedAsk((), "", wants_help=True)
    words = stripped.split()
    colleagues: list[Colleague] = []
    while words and (colleague := _colleague(words[0])) is not None:
        if colleague not in colleagues:
            colleagues.append(colleague)
        words.pop(0)
    question = INLINE_USER_MENTION.sub(lambda m: f"@{m.group(2)}", " ".join(words)).strip()
    return ParsedAsk(tuple(colleagues), question)


def _colleague(word: str) -> Colleague | None:
    word = word.rstrip(",;:")  # `<@U1|bob>, <@U2|carol>: when…` — punctuation after a mention is not part of it
    if match := USER_MENTION.match(word):
        return Colleague(match.group(1), match.group(2) or None)
    if match := PLAIN_MENTION.match(word):
        return Colleague(None, match.group(1))
    return None


# ---------------------------------------------------------------------- /askwith
@dataclass(frozen=True)
class SettingsCommand:
    action: str  # show | help | opt_in | opt_out | share | exclude | include | timezone | connect | disconnect |
    # forget | invalid
    share: SharePolicy | None = None
    channel_id: str | None = None
    raw: str = ""
    zone: str = ""  # what followed `timezone` ("Europe/Paris", "auto"); "" shows the member's zone


SIMPLE_ACTIONS = {
    "": "show",
    "show": "show",
    "status": "show",
    "help": "help",
    "on": "opt_in",
    "opt-in": "opt_in",
    "off": "opt_out",
    "opt-out": "opt_out",
    "connect": "connect",
    "disconnect": "disconnect",
    "forget": "forget",
}


def parse_settings(text: str) -> SettingsCommand:
    raw = (text or "").strip()
    words = raw.split()
    verb = words[0].lower() if words else ""
    if verb in SIMPLE_ACTIONS and len(words) <= 1:
        return SettingsCommand(SIMPLE_ACTIONS[verb], raw=raw)
    if verb == "share" and len(words) == 2 and words[1].lower() in {p.value for p in SharePolicy}:
        return SettingsCommand("share", share=SharePolicy(words[1].lower()), raw=raw)
    if verb in ("timezone", "tz") and len(words) <= 2:
        return SettingsCommand("timezone", zone=words[1] if len(words) == 2 else "", raw=raw)
    if verb in ("exclude", "include") and len(words) == 2 and (match := CHANNEL_MENTION.match(words[1])):
        return SettingsCommand(verb, channel_id=match.group(1), raw=raw)
    return SettingsCommand("invalid", raw=raw)
