"""How the consent stand-in model fails, and the exclusion a member makes while their agent works (shared by the
consent property test and benchmarks/consent.py).

    faults = Faults(("malformed", 5))   # the 6th distinct request of the ask gets a malformed reply (and its repair)
    faults.due(request, view)           # -> "unavailable" | "timeout" | "malformed" | None

A failure is made the way the endpoint would make it: `unavailable` raises HTTP 503 on every attempt of that request;
`timeout` never answers (the client's per-attempt time-out ends each attempt); `malformed` answers valid JSON of the
wrong shape whose offending field quotes the member lines the prompt holds, and does so again for the repair request.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from bot.errors import LLMTransientError
from bot.llm.scripted import scripted_reply
from bot.llm.standin.model import PromptView
from bot.llm.types import LLMReply, LLMRequest


FAULT_KINDS = ("unavailable", "timeout", "malformed")
HANG_S = 30.0  # far beyond the test's per-attempt time-out


@dataclass
class Faults:
    """One failure at the `at`-th distinct request of an ask (`None`: none), plus failures a route asks for."""

    planned: tuple[str, int] | None = None
    seen: int = 0
    failing: dict[int, str] = field(default_factory=dict)  # id(request) -> kind, so every retry fails alike
    repairs: dict[tuple[str, str], int] = field(default_factory=dict)  # (agent, purpose) -> malformed replies left
    injected: list[str] = field(default_factory=list)

    def force(self, request: LLMRequest, kind: str) -> None:
        """Fail this request (a route's own failure)."""
        self.failing[id(request)] = kind

    def due(self, request: LLMRequest, view: PromptView) -> str | None:
        key = id(request)
        if key in self.failing:
            return self.failing[key]
        if self.repairs.pop((view.me, request.purpose), 0) and request.json_schema:
            return "repair"  # the repair request of a malformed reply: malformed again
        number, self.seen = self.seen, self.seen + 1
        if self.planned is not None and number == self.planned[1]:
            kind = self.planned[0]
            if kind == "malformed" and not request.json_schema:
                kind = "unavailable"  # a plain-text call cannot be of the wrong shape
            self.failing[key] = kind
            return kind
        return None

    async def fail(self, kind: str, request: LLMRequest, view: PromptView, model: str) -> LLMReply:
        self.injected.append(kind)
        if kind == "unavailable":
            raise LLMTransientError("HTTP 503")
        if kind == "timeout":
            await asyncio.sleep(HANG_S)
            raise LLMTransientError("no reply")
        if kind == "malformed":
            self.failing.pop(id(request), None)
            self.repairs[(view.me, request.purpose)] = 1
        return scripted_reply(request, json.dumps(malformed(request, view)), model)


def quoted_lines(view: PromptView) -> str:
    """Every member line the prompt holds (memory results, notebook, heard), as one text."""
    lines = [re.sub(r"^\[[^\]]+\]\s*", "", line) for line in view.text.splitlines() if line.startswith("[")]
    noted = re.findall(r"^- \S+ [^:\n]+: (.+)$", view.text, re.M)
    heard = [said for _, said in view.heard]
    return " ".join([*lines, *noted, *heard]) or view.question


def malformed(request: LLMRequest, view: PromptView) -> dict[str, Any]:
    """Valid JSON of the wrong shape: the array or object fields carry the lines as a string (a validator that quotes
    the offending value quotes them)."""
    dump = quoted_lines(view)
    schema = request.json_schema or {}
    fields = list(schema.get("properties", {})) or ["answer"]
    reply: dict[str, Any] = {name: dump for name in fields}
    return reply


def exclude_channel(database: str, members: tuple[str, ...], channel: str) -> None:
    """Members keep a channel out of their agent's memory, written as the settings page would (another connection)."""
    with sqlite3.connect(database, timeout=30) as conn:
        conn.execute(
            "INSERT OR IGNORE INTO member_exclusion (member_id, channel_id) SELECT m.id, c.id FROM member m, channel c"
            f" WHERE m.name IN ({','.join('?' * len(members))}) AND c.platform_id = ?",
            (*members, channel),
        )


def include_channel(database: str, members: tuple[str, ...], channel: str) -> None:
    with sqlite3.connect(database, timeout=30) as conn:
        conn.execute(
            "DELETE FROM member_exclusion WHERE channel_id IN (SELECT id FROM channel WHERE platform_id = ?)"
            f" AND member_id IN (SELECT id FROM member WHERE name IN ({','.join('?' * len(members))}))",
            (channel, *members),
        )
