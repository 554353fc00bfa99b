"""Privacy level L2: only the private model reads raw memory; the main model gets the facts it extracted.

With a private model configured, an agent's act call never sees its member's messages or session summaries. One
call to the private model first reads the turn's memory hits and writes down the facts the question needs, each
with the id of the hit it comes from; those fact lines stand in for the hits in the main model's act prompt.

    lines, call = await extract_facts(private_llm, me="bob", question=q, plan=plan_json, hits=hit_lines)
"""

from __future__ import annotations

import logging
import re
from typing import Any

from bot.base.prompts import render_prompt
from bot.errors import LLMOutputError
from bot.llm.client import LLMClient
from bot.llm.types import LLMCallRecord, LLMRequest


log = logging.getLogger(__name__)

PURPOSE = "extract_facts"
MAX_FACTS = 8
FACT_CHARS = 240
UNKNOWN_SOURCE = "?"
_HIT_ID = re.compile(r"^\[([^\]]+)\]")

FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"fact": {"type": "string"}, "source": {"type": "string"}},
                "required": ["fact"],
            },
        }
    },
    "required": ["facts"],
}


async def extract_facts(
    llm: LLMClient, *, me: str, question: str, plan: str, hits: list[str]
) -> tuple[list[str], LLMCallRecord]:
    """Fact lines ("[source] fact") for the act prompt, and the record of the private call.

    An answer the private model gets wrong even after its repair yields no facts (the turn goes on without them):
    the raw hits are never handed to the main model instead. A private endpoint that is down raises
    LLMUnavailableError, which ends the conversation like any unavailable model.
    """
    chat = [
        {"role": "system", "content": render_prompt("agent", "extract_system", me=me)},
        {"role": "user", "content": render_prompt("agent", "extract_facts", question=question, plan=plan, hits=hits)},
    ]
    request = LLMRequest(chat, purpose=PURPOSE, json_schema=FACTS_SCHEMA, schema_name=PURPOSE)
    try:
        result = await llm.complete(request)
    except LLMOutputError as exc:
        log.info("private fact extraction for %s gave no usable answer: %s", me, exc)
        call = exc.call or LLMCallRecord(purpose=PURPOSE, model=llm.model, error=str(exc))
        call.prompt = chat
        return [], call
    result.call.prompt = chat
    return fact_lines(result.data, known_ids=_hit_ids(hits)), result.call


def fact_lines(data: dict[str, Any] | None, *, known_ids: set[str]) -> list[str]:
    """The extracted facts as prompt lines; a source that is not one of the hits is shown as unknown."""
    raw = (data or {}).get("facts") or []
    lines: list[str] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        fact = " ".join(str(item.get("fact") or "").split())[:FACT_CHARS]
        if not fact:
            continue
        source = str(item.get("source") or "").strip().strip("[]")
        lines.append(f"[{source if source in known_ids else UNKNOWN_SOURCE}] {fact}")
    return list(dict.fromkeys(lines))[:MAX_FACTS]


def _hit_ids(hits: list[str]) -> set[str]:
    return {found[1] for line in hits if (found := _HIT_ID.match(line))}
