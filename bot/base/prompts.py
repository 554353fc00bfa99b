"""Prompt templates: one YAML file per use in the top-level `prompts/` package, rendered with Jinja.

text = render_prompt("summarize_session", "user", messages=lines)
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from typing import Any

import yaml
from jinja2 import Environment, StrictUndefined, Template

from bot.base.text_fold import as_latin, normalise


_ENV = Environment(undefined=StrictUndefined, keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True)
DATA_OPEN, DATA_CLOSE = "<chat-data untrusted>", "</chat-data>"
CUT = "[\u2026]"  # where the share screen cut words from what an agent passes on
# A marker as a reader (the model) would take it: any slash, the words joined by a dash, space or underscore, or none.
_MARKER = re.compile(r"<\s*([/\u2044\u2215\u29f8]?)\s*chat[\s_-]*data", re.IGNORECASE)


def untrusted(text: object) -> str:
    """Chat text (memory, other agents' words) for a prompt, as data: normalised as it reads (`text_fold.normalise`:
    compatibility forms, invisible characters, entities and dashes), on one line (it cannot start a label line of its
    own) and unable to close the `<chat-data untrusted>` block it sits in (its markers, look-alike letters included,
    are defused)."""
    plain = " ".join(normalise(str(text)).split())
    seen = as_latin(plain)  # the same length: a marker found in it is at the same place in `plain`
    pieces, last = [], 0
    for found in _MARKER.finditer(seen):
        pieces.append(f"{plain[last : found.start()]}‹{found[1]}chat-data")
        last = found.end()
    return "".join(pieces) + plain[last:]


_ENV.filters["data"] = untrusted
_ENV.globals.update(data_open=DATA_OPEN, data_close=DATA_CLOSE)


@cache
def load_prompt(name: str) -> dict[str, Template]:
    """All templates in `prompts/<name>.yaml`, by key."""
    raw = yaml.safe_load(files("prompts").joinpath(f"{name}.yaml").read_text(encoding="utf-8"))
    if not isinstance(raw, dict):
        raise ValueError(f"prompts/{name}.yaml must be a mapping of template names to text")
    return {key: _ENV.from_string(value) for key, value in raw.items() if isinstance(value, str)}


def render_prompt(name: str, key: str, **variables: Any) -> str:
    return load_prompt(name)[key].render(**variables).strip()
