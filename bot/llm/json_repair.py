"""Tolerant reading of a JSON object out of a model's reply.

Models wrap JSON in code fences, add a sentence before or after it, or leave a trailing comma. This module finds
the first balanced JSON object and fixes those slips; anything else is reported as a readable reason (ValueError),
which the client shows to the model in its one repair re-ask.
"""

from __future__ import annotations

import json
import re
from typing import Any


_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text`. Raises ValueError saying what was wrong."""
    if not text.strip():
        raise ValueError("the reply was empty")
    candidate = _unfenced(text).strip()
    direct = _loads_or_none(candidate)
    if isinstance(direct, str):  # a JSON string holding the object (double-encoded)
        direct = _loads_or_none(direct)
    if isinstance(direct, dict):
        return direct
    if candidate.startswith("{") and _matching_brace(candidate, 0) is None:
        # A reply cut off by the length limit: an object nested in it is not the answer, so say what happened.
        raise ValueError("the reply holds no complete JSON object: it is cut off before its end (too long?)")
    block = first_balanced_object(candidate)
    if block is None:
        raise ValueError("the reply holds no complete JSON object")
    for attempt in (block, _without_trailing_commas(block)):
        value = _loads_or_none(attempt)
        if isinstance(value, dict):
            return value
    try:
        json.loads(block)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the JSON object is not valid JSON ({exc.msg} at character {exc.pos})") from None
    raise ValueError("the reply holds no JSON object")


def first_balanced_object(text: str) -> str | None:
    """The text of the first `{...}` whose braces balance, ignoring braces inside strings; None if there is none."""
    start = text.find("{")
    while start != -1:
        end = _matching_brace(text, start)
        if end is not None:
            return text[start : end + 1]
        start = text.find("{", start + 1)
    return None


def _matching_brace(text: str, start: int) -> int | None:
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def _unfenced(text: str) -> str:
    match = _FENCE.search(text)
    return match.group(1) if match else text


def _without_trailing_commas(block: str) -> str:
    # Only outside strings: split on string literals and fix the code parts.
    parts = re.split(r'("(?:\\.|[^"\\])*")', block)
    return "".join(part if index % 2 else _TRAILING_COMMA.sub(r"\1", part) for index, part in enumerate(parts))


def _loads_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None
