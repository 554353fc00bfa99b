"""The agent's memory tools, run only on its own member's viewer, with every query recorded.

The think call chooses the parameters (clear: keywords, sender/channel/time filters, context window, limit; fuzzy:
query text, top-k) and may change them from turn to turn. Executing them needs no LLM. Parameters are clamped so a
model cannot ask for the whole history at once; the whole history is read only when it fits the evidence budget
(`read_whole`, and a clear query whose channel/sender scope fits is answered with that whole scope).

Every result becomes evidence lines (`bot.agents.evidence`): a clear hit and its context window, a fuzzy hit's
session summary and the session's messages that best match the query. A channel the member excludes mid-ask is
forgotten at once (`forget`, from `bot.consent.exclusions`): the searches cached in this ask that returned its lines
are dropped, and a search already under way keeps none of them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.agents.ablations import Ablations
from bot.agents.evidence import EvidenceLine
from bot.errors import AskwithError, LLMOutputError
from bot.memory.access import HistoryRead, MemoryAccess, Visible
from bot.memory.history import HistorySize
from bot.memory.keywords import STOP_WORDS, phrase_of
from bot.memory.sight import Sight
from bot.memory.types import ClearHit, ClearQuery, FuzzyHit, FuzzyQuery, Viewer


MAX_KEYWORDS = 12  # counted after stop-word-only keywords are dropped
MAX_LIMIT = 20
MAX_CONTEXT = 3
MAX_TOP_K = 5
MAX_QUERIES = 3  # of each kind per turn
LINE_OVERHEAD_CHARS = 40  # id, channel, time and sender of a line, for sizing a whole-history read
OWN_READS = ("clear", "fuzzy", "history")  # how a line read from the member's own memory came (`EvidenceLine.via`)


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
        # No whole sessions: a hit brings its best-matching messages (`FuzzyHit.matches`), ranked by the search.
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
    words = (k.strip() for k in (str(k) for k in keywords))
    cleaned = tuple(k for k in words if not all(w in STOP_WORDS for w in phrase_of(k)))[:MAX_KEYWORDS]
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
    kind: str  # clear | fuzzy | history (a whole-history read)
    params: dict[str, Any]
    hit_ids: list[str] = field(default_factory=list)
    hits: list[EvidenceLine] = field(default_factory=list)  # ranked evidence lines (kept in TurnStep.evidence)
    latency_s: float = 0.0
    error: str | None = None
    skipped: str | None = None  # why it did not run (ablation, store missing, empty query)
    cached: bool = False  # the same query ran earlier in this ask; its hits were reused

    def dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "hits"}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> QueryRecord:
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__ and k != "hits"})


SearchCache = dict[tuple[str, int, str], tuple[list[str], list[EvidenceLine]]]  # (kind, member, params) -> hits


class MemoryTools:
    """One agent's memory tools: bound to its member's viewer, so it can read nothing else.

    `cache` is shared by the agents of one ask: an agent repeating a query (agents often do, and a sub-conversation
    starts with the searches its asker already made) gets the same hits without searching again."""

    def __init__(
        self,
        viewer: Viewer,
        memory: MemoryAccess,
        ablations: Ablations,
        *,
        cache: SearchCache | None = None,
        whole_budget: int = 0,  # tokens a whole-history or whole-scope read may take; 0 = never read whole
    ) -> None:
        self.viewer = viewer
        self.memory = memory
        self.ablations = ablations
        self.cache: SearchCache = {} if cache is None else cache
        self.whole_budget = whole_budget if memory.history is not None else 0
        self.excluded: frozenset[str] = frozenset()  # channels the member excluded since the ask read them

    def forget(self, excluded: frozenset[str]) -> int:
        """The member now keeps `excluded` (channel names and ids) out of memory: drop their searches cached in this
        ask that returned a line of one (the same query searches again, scoped as the member now allows); later
        results, of a search under way, are filtered too. Returns how many cached searches were dropped."""
        self.excluded = excluded
        if not excluded:
            return 0
        mine = [k for k, (_, lines) in self.cache.items() if k[1] == self.viewer.member_id]
        stale = [k for k in mine if any(in_channels(line, excluded) for line in self.cache[k][1])]
        for key in stale:
            self.cache.pop(key, None)
        return len(stale)

    async def read_whole(self) -> QueryRecord:
        """Whole-history mode: everything the member can see, when it fits the budget (recorded either way)."""
        record = QueryRecord("history", {"budget_tokens": self.whole_budget})
        if not self.whole_budget or self.memory.history is None:
            record.skipped = "off"
            return record
        size = await self.memory.history.size(self.viewer, limit=self._most_messages)
        record.params.update(messages=size.messages, tokens=_tokens(size), more=size.more)
        if size.more or _tokens(size) > self.whole_budget:
            record.skipped = "exceeds_budget"
        elif size.messages:
            await self._read_scope(record, None, None)
        return record

    async def _read_scope(self, record: QueryRecord, channel: str | None, sender: str | None) -> None:
        history = self.memory.history
        if history is None:
            return
        views = await self._timed(record, history.read(self.viewer, channel=channel, sender=sender))
        lines = self._allowed(EvidenceLine.of_message(v, via="history") for v in views)
        record.hit_ids, record.hits = [line.id for line in lines], lines

    async def _scope_fits(self, params: ClearParams) -> bool:
        """A clear query filtered to one channel or sender whose whole scope fits the budget is read whole."""
        if not self.whole_budget or self.memory.history is None or not (params.channel or params.sender):
            return False
        size = await self.memory.history.size(
            self.viewer, channel=params.channel, sender=params.sender, limit=self._most_messages
        )
        return not size.more and 0 < _tokens(size) <= self.whole_budget

    @property
    def _most_messages(self) -> int:
        """More messages than this cannot fit the budget, whatever their length."""
        return self.whole_budget * 4 // LINE_OVERHEAD_CHARS

    async def run(self, clear: list[ClearParams], fuzzy: list[FuzzyParams]) -> list[QueryRecord]:
        """All queries of one turn, concurrently, on one reading of the channels the member can see (taken when
        the first query needs it: the turn's searches agree on the member's sight, and read it once)."""
        sight = _Sight(self.memory.history, self.viewer)
        jobs = [self._clear(p, sight) for p in clear[:MAX_QUERIES]]
        jobs += [self._fuzzy(p, sight) for p in fuzzy[:MAX_QUERIES]]
        return list(await asyncio.gather(*jobs))

    async def _clear(self, params: ClearParams, sight: _Sight) -> QueryRecord:
        record = QueryRecord("clear", params.dict())
        if not self.ablations.clear_memory:
            record.skipped = "ablation"
        elif self.memory.clear is None:
            record.skipped = "unavailable"
        elif not params.keywords:
            record.skipped = "empty"
        elif not self._from_cache(record):
            if await self._scope_fits(params):
                record.params["whole_scope"] = True
                await self._read_scope(record, params.channel, params.sender)
                self._keep(record, record.hit_ids, record.hits)
                return record
            search = self.memory.clear.search(self.viewer, params.query(), visible=await sight.channels())
            hits = await self._timed(record, search)
            lines = [line for h in hits for line in _clear_lines(h)]
            self._keep(record, list(dict.fromkeys(line.id for line in lines)), lines)
        return record

    async def _fuzzy(self, params: FuzzyParams, sight: _Sight) -> QueryRecord:
        record = QueryRecord("fuzzy", params.dict())
        if not self.ablations.fuzzy_memory:
            record.skipped = "ablation"
        elif self.memory.fuzzy is None:
            record.skipped = "unavailable"
        elif not params.text:
            record.skipped = "empty"
        elif not self._from_cache(record):
            search = self.memory.fuzzy.search(self.viewer, params.query(), visible=await sight.channels())
            hits = await self._timed(record, search)
            lines = [line for h in hits for line in _fuzzy_lines(h)]
            self._keep(record, list(dict.fromkeys(line.id for line in lines)), lines)
        return record

    def _key(self, record: QueryRecord) -> tuple[str, int, str]:
        return record.kind, self.viewer.member_id, json.dumps(record.params, sort_keys=True, default=str)

    def _from_cache(self, record: QueryRecord) -> bool:
        if (found := self.cache.get(self._key(record))) is None:
            return False
        record.hit_ids, record.hits = list(found[0]), list(found[1])
        record.cached = True
        return True

    def _keep(self, record: QueryRecord, hit_ids: list[str], lines: list[EvidenceLine]) -> None:
        kept = self._allowed(lines)
        if len(kept) < len(lines):  # read before the exclusion, returned after it
            hit_ids, lines = [i for i in hit_ids if i in {line.id for line in kept}], kept
        record.hit_ids, record.hits = hit_ids, lines
        if record.error is None:
            self.cache[self._key(record)] = (hit_ids, lines)

    def _allowed(self, lines: Iterable[EvidenceLine]) -> list[EvidenceLine]:
        return [line for line in lines if not in_channels(line, self.excluded)]

    async def _timed(self, record: QueryRecord, search: Any) -> list[Any]:
        started = time.perf_counter()
        try:
            return list(await search)
        except AskwithError as exc:  # a query the store refuses is the model's to fix, not a crash
            record.error = str(exc)
            return []
        finally:
            record.latency_s = time.perf_counter() - started


class _Sight:
    """The channels a member can see, read once for the searches of one turn, by the first that needs them (a
    `Sight`: the turn's searches also share the statements they have in common)."""

    def __init__(self, history: HistoryRead | None, viewer: Viewer) -> None:
        self._history = history
        self._viewer = viewer
        self._task: asyncio.Future[Sight] | None = None

    async def channels(self) -> Visible | None:
        """None when no reader is at hand: each search then reads them itself."""
        if self._history is None:
            return None
        if self._task is None:
            self._task = asyncio.ensure_future(self._read())
        return await self._task

    async def _read(self) -> Sight:
        return Sight(await self._history.channels(self._viewer))


def in_channels(line: EvidenceLine, channels: frozenset[str]) -> bool:
    """The line was read from the member's own memory in one of these channels (by name or platform id); a line
    another agent relayed is that member's, not this one's."""
    return bool(channels) and line.via in OWN_READS and line.channel.lstrip("#") in channels


def _tokens(size: HistorySize) -> int:
    return (size.chars + size.messages * LINE_OVERHEAD_CHARS + 3) // 4


def _clear_lines(hit: ClearHit) -> list[EvidenceLine]:
    """The hit, then its context window (the messages around it in its channel)."""
    own = EvidenceLine.of_message(hit.message, via="clear")
    return [own, *(EvidenceLine.of_message(c, via="clear") for c in hit.context if c.id != hit.message.id)]


def _fuzzy_lines(hit: FuzzyHit) -> list[EvidenceLine]:
    """The session's summary, then its messages that best match the query (as the search ranked them)."""
    summary = EvidenceLine(
        f"session:{hit.session_key}", "", f"{hit.first_ts:%Y-%m-%d %H:%M}", hit.channel_name,
        " ".join(hit.summary.split()), via="fuzzy",
    )  # fmt: skip
    return [summary, *(EvidenceLine.of_message(m, via="fuzzy") for m in hit.matches)]
