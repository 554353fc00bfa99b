from __future__ import annotations

import pytest

from bot.llm.json_repair import first_balanced_object, parse_json_object
from bot.llm.structured import check_reply, is_strict_compatible


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here you go:\n```\n{"a": [1, 2]}\n```\nAnything else?', {"a": [1, 2]}),
        ('Sure! {"a": {"b": "}"}} hope that helps {"c": 2}', {"a": {"b": "}"}}),
        ('{"a": [1, 2,], "b": "x, }",}', {"a": [1, 2], "b": "x, }"}),
        ('"{\\"a\\": 1}"', {"a": 1}),
        ('{"quote": "she said \\"hi\\" {"} trailing', {"quote": 'she said "hi" {'}),
    ],
)
def test_tolerant_parse_finds_the_first_object(text: str, expected: dict) -> None:
    assert parse_json_object(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ('{"answer": "half of it', "no complete JSON object"),
        ('{"plan":[{"id":"r1","need":""},{"id":"r2","ne', "cut off before its end"),  # not the inner object
        ("just words", "no complete JSON object"),
        ("[1, 2, 3]", "no complete JSON object"),
        ("{'a': 1}", "not valid JSON"),
    ],
)
def test_unusable_replies_say_why(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_json_object(text)


def test_first_balanced_object_skips_an_unbalanced_prefix() -> None:
    assert first_balanced_object('{ broken {"ok": true}') == '{"ok": true}'  # the outer brace never closes
    assert first_balanced_object('{"cut": {"off": 1}') == '{"off": 1}'
    assert first_balanced_object("no braces") is None
    assert first_balanced_object('x } {"ok": {"deep": 1}} y') == '{"ok": {"deep": 1}}'


SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "known": {"type": "boolean"}},
    "required": ["answer", "known"],
}


def test_check_reply_names_the_schema_violation() -> None:
    assert check_reply('{"answer": "x", "known": true}', SCHEMA) == {"answer": "x", "known": True}
    with pytest.raises(ValueError, match="'known' is a required property"):
        check_reply('{"answer": "x"}', SCHEMA)
    with pytest.raises(ValueError, match="at known: must be of type 'boolean'") as info:
        check_reply('{"answer": "x", "known": "yes"}', SCHEMA)
    assert "yes" not in str(info.value)  # the rule, never the value (a value may quote memory)


def test_strict_mode_only_for_closed_fully_required_schemas() -> None:
    assert not is_strict_compatible(SCHEMA)
    closed = {**SCHEMA, "additionalProperties": False}
    assert is_strict_compatible(closed)
    nested_open = {
        "type": "object",
        "additionalProperties": False,
        "required": ["items"],
        "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"x": {}}}}},
    }
    assert not is_strict_compatible(nested_open)
    partial = {**closed, "required": ["answer"]}
    assert not is_strict_compatible(partial)
