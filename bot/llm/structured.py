"""Structured output: the JSON forms an endpoint may accept, reply checking, and the repair re-ask.

Endpoints differ in what `response_format` they take: OpenAI and vLLM take `json_schema`; the llama.cpp Python
server takes only `json_object` with a `schema` beside it (and answers HTTP 500 to `json_schema`); some take bare
`json_object`; some take none. The client tries them in `FALLBACK_ORDER` and remembers what worked; every reply is
checked against the schema here whatever the endpoint promised.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from bot.base.prompts import render_prompt
from bot.llm.json_repair import parse_json_object
from bot.llm.types import LLMRequest, Messages


# How much of a bad reply the repair re-ask shows the model back: enough to see the mistake, not a token bill.
REPAIR_ECHO_CHARS = 4000


class JsonMode(Enum):
    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object_schema"
    JSON_OBJECT = "json_object"
    PROMPT_ONLY = "prompt_only"  # no response_format at all: the prompt and the checks below do the work


FALLBACK_ORDER = (JsonMode.JSON_SCHEMA, JsonMode.JSON_OBJECT_SCHEMA, JsonMode.JSON_OBJECT, JsonMode.PROMPT_ONLY)


def response_format(mode: JsonMode, request: LLMRequest) -> dict[str, Any] | None:
    """The OpenAI `response_format` value for `mode`."""
    schema = request.json_schema or {}
    if mode is JsonMode.JSON_SCHEMA:
        spec = {"name": request.schema_name, "schema": schema, "strict": is_strict_compatible(schema)}
        return {"type": "json_schema", "json_schema": spec}
    if mode is JsonMode.JSON_OBJECT_SCHEMA:
        return {"type": "json_object", "schema": schema}
    if mode is JsonMode.JSON_OBJECT:
        return {"type": "json_object"}
    return None


def is_strict_compatible(schema: dict[str, Any]) -> bool:
    """Whether OpenAI's strict mode accepts `schema`: every object closed and every property required.

    Strict mode refuses other schemas outright, so asking for it only when it fits keeps a loose schema working.
    """
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties", True) is not False:
            return False
        if set(schema.get("required", [])) != set(properties):
            return False
    return all(is_strict_compatible(child) for child in _subschemas(schema))


def _subschemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    children: list[dict[str, Any]] = list(schema.get("properties", {}).values())
    if isinstance(schema.get("items"), dict):
        children.append(schema["items"])
    for key in ("anyOf", "oneOf", "allOf"):
        children.extend(schema.get(key, []))
    children.extend(schema.get("$defs", {}).values())
    return [child for child in children if isinstance(child, dict)]


class ReplyProblem(ValueError):
    """Why a reply is unusable: the message is for the model (the repair re-ask shows it), `kind` for the record.

    The message names where and which rule, never the offending value: it also reaches the turn's error, the call
    record and the log, and a reply's values may quote the member's memory. The model needs no more: its reply is
    shown back to it right above the message."""

    EMPTY = "empty"
    INVALID_JSON = "invalid_json"  # no JSON object could be read out of it
    WRONG_SCHEMA = "wrong_schema"  # a JSON object, but not in the shape asked for

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def check_reply(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The reply's JSON object if it matches `schema`; otherwise ReplyProblem saying what is wrong."""
    try:
        data = parse_json_object(text)
    except ValueError as exc:
        kind = ReplyProblem.EMPTY if not text.strip() else ReplyProblem.INVALID_JSON
        raise ReplyProblem(kind, str(exc)) from None
    validator = _validator(schema)
    if validator.is_valid(data):
        return data
    error = best_match(validator.iter_errors(data))
    if error is not None:
        raise ReplyProblem(ReplyProblem.WRONG_SCHEMA, f"at {field_path(error)}: {violated_rule(error)}")
    return data


def field_path(error: ValidationError) -> str:
    """Where in the reply `error` is ("plan/0/status"), named by the schema: a key the reply made up (which could
    be any text) is shown as "?"."""
    schema_path = list(error.absolute_schema_path)
    named = {str(schema_path[i + 1]) for i, part in enumerate(schema_path[:-1]) if part == "properties"}
    parts = [str(p) if isinstance(p, int) or p in named else "?" for p in error.absolute_path]
    return "/".join(parts) or "the top level"


def violated_rule(error: ValidationError) -> str:
    """The schema rule `error` breaks, in words drawn from the schema alone (jsonschema's own message quotes the
    offending value)."""
    rule, expected = error.validator, error.validator_value
    instance = error.instance
    if rule == "required":
        missing = [f"{name!r}" for name in expected if not isinstance(instance, dict) or name not in instance]
        if len(missing) > 1:
            return f"{', '.join(missing)} are required properties"
        return f"{(missing or [repr(expected)])[0]} is a required property"
    if rule == "type":
        kinds = expected if isinstance(expected, list) else [expected]
        return "must be of type " + " or ".join(f"{kind!r}" for kind in kinds)
    if rule == "additionalProperties":
        return "has a property the schema does not allow"
    if rule in ("anyOf", "oneOf"):
        return "matches none of the allowed forms" if rule == "anyOf" else "must match exactly one allowed form"
    if rule in _RULES:
        return _RULES[rule].format(expected)
    return f"breaks the schema rule {rule!r}"


_RULES = {
    "enum": "must be one of {!r}",
    "const": "must be {!r}",
    "maxItems": "must have at most {} items",
    "minItems": "must have at least {} items",
    "uniqueItems": "must not repeat an item",
    "maxLength": "must be at most {} characters long",
    "minLength": "must be at least {} characters long",
    "maxProperties": "must have at most {} properties",
    "minProperties": "must have at least {} properties",
    "pattern": "must match the pattern {!r}",
    "format": "must be in the format {!r}",
    "minimum": "must be at least {}",
    "maximum": "must be at most {}",
    "exclusiveMinimum": "must be more than {}",
    "exclusiveMaximum": "must be less than {}",
    "multipleOf": "must be a multiple of {}",
    "not": "has a form the schema does not allow",
}


_VALIDATORS: dict[int, tuple[dict[str, Any], Draft202012Validator]] = {}


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    """One validator per schema object: requests carry the same few schemas over and over."""
    held = _VALIDATORS.get(id(schema))
    if held is None or held[0] is not schema:  # the validator reads the schema object itself: never stale
        if len(_VALIDATORS) >= 64:  # schemas built per request: keep the table small
            _VALIDATORS.clear()
        held = _VALIDATORS[id(schema)] = (schema, Draft202012Validator(schema))
    return held[1]


def json_repair_messages(request: LLMRequest, bad_reply: str, problem: str) -> Messages:
    """The original conversation, the model's unusable reply, and a request to answer again in the right shape."""
    echo = bad_reply[:REPAIR_ECHO_CHARS]
    nudge = render_prompt(
        "llm_repair",
        "json",
        problem=problem,
        empty=not bad_reply.strip(),
        schema=json.dumps(request.json_schema, ensure_ascii=False),
    )
    return _followed_by(request.messages, echo, nudge)


def text_repair_messages(request: LLMRequest, bad_reply: str) -> Messages:
    """For a plain-text request whose reply was empty: ask once more."""
    return _followed_by(request.messages, bad_reply, render_prompt("llm_repair", "empty_text"))


def _followed_by(messages: Messages, reply: str, nudge: str) -> Messages:
    # Some servers refuse an assistant turn with empty content, so an empty reply is said in the nudge instead.
    assistant = [{"role": "assistant", "content": reply}] if reply.strip() else []
    return [*messages, *assistant, {"role": "user", "content": nudge}]
