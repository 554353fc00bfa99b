"""Discord's message limits, as the fake API enforces them: 2,000 characters of content, at most 10 embeds of at
most 25 fields, 6,000 characters over all of a message's embeds. A breach is `InvalidForm`, which the fake answers
400/50035 Invalid Form Body, as Discord does."""

from __future__ import annotations

from typing import Any, Protocol


class _KeepsParts(Protocol):
    components: dict[str, list[dict[str, Any]]]
    embeds: dict[str, list[dict[str, Any]]]


MAX_EMBEDS, MAX_FIELDS, MAX_TOTAL = 10, 25, 6000
LIMITS = {"title": 256, "description": 4096, "footer": 2048, "author": 256, "field_name": 256, "field_value": 1024}


class InvalidForm(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def check_embeds(embeds: list[dict[str, Any]]) -> None:
    """Discord's embed limits: at most 10 embeds, 25 fields each, and 6,000 characters over all of them."""
    if len(embeds) > MAX_EMBEDS:
        raise InvalidForm(f"embeds: at most {MAX_EMBEDS}")
    total = 0
    for embed in embeds:
        sizes = {
            "title": len(embed.get("title") or ""),
            "description": len(embed.get("description") or ""),
            "footer": len((embed.get("footer") or {}).get("text") or ""),
            "author": len((embed.get("author") or {}).get("name") or ""),
        }
        fields = embed.get("fields") or []
        if len(fields) > MAX_FIELDS:
            raise InvalidForm(f"embeds.fields: at most {MAX_FIELDS}")
        for item in fields:
            if not item.get("name") or not item.get("value"):
                raise InvalidForm("embeds.fields: name and value are required")
            sizes_field = {"field_name": len(item["name"]), "field_value": len(item["value"])}
            for key, size in sizes_field.items():
                if size > LIMITS[key]:
                    raise InvalidForm(f"embeds.{key}: at most {LIMITS[key]}")
            total += sum(sizes_field.values())
        for key, size in sizes.items():
            if size > LIMITS[key]:
                raise InvalidForm(f"embeds.{key}: at most {LIMITS[key]}")
        total += sum(sizes.values())
    if total > MAX_TOTAL:
        raise InvalidForm(f"embeds: {total} characters, at most {MAX_TOTAL} in all")


def check_message(body: dict[str, Any]) -> None:
    content = body.get("content") or ""
    if len(content) > 2000:
        raise InvalidForm("content must be 2000 or fewer in length")
    check_embeds(body.get("embeds") or [])


def keep_parts(api: _KeepsParts, message_id: str, body: dict[str, Any]) -> None:
    """A post's or edit's embeds and components, as Discord keeps them (an edit replaces only what it names; an
    empty list on a message that never had any changes nothing)."""
    if body.get("components") or ("components" in body and message_id in api.components):
        api.components[message_id] = body["components"] or []
    if body.get("embeds") or ("embeds" in body and message_id in api.embeds):
        api.embeds[message_id] = body["embeds"] or []
