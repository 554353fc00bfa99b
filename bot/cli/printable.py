"""Text from chat made safe to print on a terminal.

A chat message may carry terminal control sequences (`ESC [ 2 J` clears the screen, OSC 8 forges links, OSC 52
writes the clipboard). rich strips only a few control characters, so every text from a chat (messages, utterances,
questions, answers, plan values) passes through `printable` before the CLI prints it: each control character
becomes its visible escape (`\\x1b`); line breaks and tabs stay.

    printable("hi \\x1b[2J")  # "hi \\\\x1b[2J"
"""

from __future__ import annotations

import re


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text) if _CONTROL.search(text) else text
