"""Text from chat made safe to print on a terminal.

A chat message may carry terminal control sequences (`ESC [ 2 J` clears the screen, OSC 8 forges links, OSC 52
writes the clipboard). rich strips only a few control characters, so every text from a chat (messages, utterances,
questions, answers, plan values) passes through `printable` before the CLI prints it: each control character
becomes its visible escape (`\\x1b`); line breaks and tabs stay.

    printable("hi \\x1b[2J")  # "hi \\\\x1b[2J"
    folded("x" * 5_000_000)   # the first MAX_CHARS characters and "… (4,999,400 more characters)"

A message may also be megabytes long: `folded` bounds what one hit prints (characters and lines) and says how much
it left out.
"""

from __future__ import annotations

import re


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text) if _CONTROL.search(text) else text


MAX_CHARS = 600
MAX_LINES = 8


def folded(text: str, *, max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES) -> str:
    """At most `max_chars` characters on at most `max_lines` lines of `text`, saying how much more there is."""
    cut = text[:max_chars]
    lines = cut.split("\n")
    if len(lines) > max_lines:
        cut = "\n".join(lines[:max_lines])
    left = len(text) - len(cut)
    return cut if left <= 0 else f"{cut.rstrip()}… ({left:,} more characters)"
