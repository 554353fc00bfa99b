"""The agent's two memory tools, run only on its own member's viewer, with every query recorded.

The think call chooses the parameters (clear: keywords, sender/channel/time filters, context window, limit; fuzzy:
query text, top-k) and may change them from turn to turn. Executing them needs no LLM. Parameters are clamped so a
model cannot ask for the whole history at once.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from bot.agents.ablations import Ablations
from bot.errors import AskwithError, LLMOutputError
from bot.llm.client import LLMClient
from bot.memory.types import ClearHit, ClearQuery, FuzzyHit, FuzzyQuery, Viewer


MAX_KEYWORDS = 6
MAX_LIMIT = 20
MAX_CONTEXT = 3
MAX_TOP_K = 5
MAX_QUERIES = 3  # of each kind per turn
HIT_CHARS = 180  # a hit's text is trimmed to this in prompts (compact prompts keep asks cheap)


class ClearSearch(Protocol):
    async def search(self, viewer: Viewer, query: ClearQuery) -> list[ClearHit]: ...


class FuzzySearch(Protocol):
    async def search(self, viewer: Viewer, query: FuzzyQuery) -> list[FuzzyHit]: ...


@dataclass(frozen=True)
class MemoryAccess:
    """The memory stores an ask reads through; None = that store is not available in this deployment.

    `reader` is the private model of the privacy split (L2): the only model that reads what these stores return
    (it extracts facts for the main model). None = no split: the main model reads the hits itself."""

    clear: ClearSearch | None
    fuzzy: FuzzySearch | None
    reader: LLMClient | None = None


# ---------------------------------------------------------------------- parameters the model chooses
@dataclass(frozen=True)
class ClearParams:
    keywords: tuple[str, ...]
    sender: str | None = None
    channel: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    context_window: int = 0
    limit: int = 5

    def query(self) -> ClearQuery:
        return ClearQuery(
            self.keywords, self.sender, self.channel, self.since, self.until, self.context_window, self.limit
        )

    def dict(self) -> dict[str, Any]:
        raw = {**self.__dict__, "keywords": list(self.keywords)}
        raw["since"] = self.since.isoformat() if self.since else None
        raw["until"] = self.until.isoformat() if self.until else None
        return raw


@dataclass(frozen=True)
class FuzzyParams:
    text: str
    top_k: int = 3

    def query(self) -> FuzzyQuery:
        return FuzzyQuery(self.text, self.top_k)

    def dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def parse_clear(raw: Any) -> ClearParams:
    if not isinstance(raw, dict):
        raise LLMOutputError("each clear-memory query must be an object")
    keywords = raw.get("keywords") or []
    if isinstance(keywords, str):
        keywords = keywords.split(",")
    if not isinstance(keywords, list):
        raise LLMOutputError("clear-memory keywords must be a list of strings")
    cleaned = tuple(k.strip() for k in (str(k) for k in keywords) if k.strip())[:MAX_KEYWORDS]
    return ClearParams(
        keywords=cleaned,
        sender=_text_or_none(raw.get("sender")),
        channel=_text_or_none(raw.get("channel")),
        since=_time_or_none(raw.get("since")),
        until=_time_or_none(raw.get("until")),
        context_window=_clamp(raw.get("context_window"), 0, MAX_CONTEXT, 0),
        limit=_clamp(raw.get("limit"), 1, MAX_LIMIT, 5),
    )


def parse_fuzzy(raw: Any) -> FuzzyParams:
    if isinstance(raw, str):
        raw = {"text": raw}
    if not isinstance(raw, dict):
        raise LLMOutputError("each fuzzy-memory query must be an object")
    return FuzzyParams(str(raw.get("text") or "").strip(), _clamp(raw.get("top_k"), 1, MAX_TOP_K, 3))


def _text_or_none(value: Any) -> str | None:
    return str(value).strip().lstrip("@#") or None if value else None


def _time_or_none(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None  # a filter the model wrote badly is dropped rather than failing the turn


def _clamp(value: Any, low: int, high: int, default: int) -> int:
    try:
        return max(low, min(high, int(value)))
    except (TypeError, ValueError):
        return default


# ---------------------------------------------------------------------- executing and recording
@dataclass
class QueryRecord:
    kind: str  # clear | fuzzy
    params: dict[str, Any]
    hit_ids: list[str] = field(default_factory=list)
    hits: list[str] = field(default_factory=list)  # compact text lines for the act prompt (not persisted)
    latency_s: float = 0.0
    error: str | None = None
    skipped: str | None = None  # why it did not run (ablation, store missing, empty query)
    cached: bool = False  # the same query ran earlier in this ask; its hits were reused

    def dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "hits"}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> QueryRecord:
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__ and k != "hits"})


SearchCache = dict[tuple[str, int, str], tuple[list[str], list[str]]]  # (kind, member, params) -> (ids, lines)


class MemoryTools:
    """One agent's memory tools: bound to its member's viewer, so it can read nothing else.

    `cache` is shared by the agents of one ask: an agent repeating a query (agents often do, and a sub-conversation
    starts with the searches its asker already made) gets the same hits without searching again."""

    def __init__(
        self, viewer: Viewer, memory: MemoryAccess, ablations: Ablations, *, cache: SearchCache | None = None
    ) -> None:
        self.viewer = viewer
        self.memory = memory
        self.ablations = ablations
        self.cache: SearchCache = {} if cache is None else cache

    async def run(self, clear: list[ClearParams], fuzzy: list[FuzzyParams]) -> list[QueryRecord]:
        """All queries of one turn, concurrently."""
        jobs = [self._clear(p) for p in clear[:MAX_QUERIES]] + [self._fuzzy(p) for p in fuzzy[:MAX_QUERIES]]
        return list(await asyncio.gather(*jobs))

    async def _clear(self, params: ClearParams) -> QueryRecord:
        record = QueryRecord("clear", params.dict())
        if not self.ablations.clear_memory:
            record.skipped = "ablation"
        elif self.memory.clear is None:
            record.skipped = "unavailable"
        elif not params.keywords:
            record.skipped = "empty"
        elif not self._from_cache(record):
            hits = await self._timed(record, self.memory.clear.search(self.viewer, params.query()))
            self._keep(record, [h.message.id for h in hits], [_clear_line(h) for h in hits])
        return record

    async def _fuzzy(self, params: FuzzyParams) -> QueryRecord:
        record = QueryRecord("fuzzy", params.dict())
        if not self.ablations.fuzzy_memory:
            record.skipped = "ablation"
        elif self.memory.fuzzy is None:
            record.skipped = "unavailable"
        elif not params.text:
            record.skipped = "empty"
        elif not self._from_cache(record):
            hits = await self._timed(record, self.memory.fuzzy.search(self.viewer, params.query()))
            self._keep(record, [f"session:{h.session_key}" for h in hits], [_fuzzy_line(h) for h in hits])
        return record

    def _key(self, record: QueryRecord) -> tuple[str, int, str]:
        return record.kind, self.viewer.member_id, json.dumps(record.params, sort_keys=True, default=str)

    def _from_cache(self, record: QueryRecord) -> bool:
        if (found := self.cache.get(self._key(record))) is None:
            return False
        record.hit_ids, record.hits = list(found[0]), list(found[1])
        record.cached = True
        return True

    def _keep(self, record: QueryRecord, hit_ids: list[str], lines: list[str]) -> None:
        record.hit_ids, record.hits = hit_ids, lines
        if record.error is None:
            self.cache[self._key(record)] = (hit_ids, lines)

    async def _timed(self, record: QueryRecord, search: Any) -> list[Any]:
        started = time.perf_counter()
        try:
            return list(await search)
        except AskwithError as exc:  # a query the store refuses is the model's to fix, not a crash
            record.error = str(exc)
            return []
        finally:
            record.latency_s = time.perf_counter() - started


def _trim(text: str, limit: int = HIT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clear_line(hit: ClearHit) -> str:
    m = hit.message
    line = f"[{m.id}] #{m.channel_name} {m.ts:%Y-%m-%d %H:%M} {m.sender}: {_trim(m.text)}"
    around = [c for c in hit.context if c.id != m.id]
    if around:
        line += " | context: " + " / ".join(f"{c.sender}: {_trim(c.text, 80)}" for c in around)
    return line


def _fuzzy_line(hit: FuzzyHit) -> str:
    return f"[session:{hit.session_key}] #{hit.channel_name} {hit.first_ts:%Y-%m-%d}: {_trim(hit.summary, 240)}"
