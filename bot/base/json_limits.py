"""How deep a JSON document from outside may nest, checked before any parser recurses into it.

    too_deep('{"a": [[[1]]]}')         # False
    too_deep("[" * 200_000)            # True: refused with 400, where json.loads would raise RecursionError
    form_too_deep(b"payload=%5B%5B...")  # a form body's JSON fields (Slack's interactive `payload`) too

No message a platform sends nests anywhere near MAX_DEPTH; the check reads the brackets outside strings only, so it
costs one pass of two regular expressions over the body.
"""

from __future__ import annotations

import re
from itertools import accumulate
from urllib.parse import parse_qsl


MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def too_deep(text: str, *, max_depth: int = MAX_DEPTH) -> bool:
    """Whether `text`, read as JSON, opens more than `max_depth` arrays and objects inside one another."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if len(brackets) <= 2 * max_depth:
        return False
    return max(accumulate(1 if b in "[{" else -1 for b in brackets)) > max_depth


def form_too_deep(body: str, *, max_depth: int = MAX_DEPTH) -> bool:
    """Whether a form-encoded body carries a field whose JSON nests too deep."""
    return any(too_deep(value, max_depth=max_depth) for _, value in parse_qsl(body, keep_blank_values=True))
