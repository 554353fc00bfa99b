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


_ENV = Environment(undefined=StrictUndefined, keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True)
DATA_OPEN, DATA_CLOSE = "<chat-data untrusted>", "</chat-data>"
_MARKER = re.compile(r"<\s*(/?)\s*chat-data", re.IGNORECASE)


def untrusted(text: object) -> str:
    """Chat text (memory, other agents' words) for a prompt, as data: on one line (it cannot start a label line of
    its own) and unable to close the `<chat-data untrusted>` block it sits in (its markers are defused)."""
    return _MARKER.sub(lambda m: f"‹{m[1]}chat-data", " ".join(str(text).split()))


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
