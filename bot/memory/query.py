"""Reading what someone typed as a memory query: the one function agents, the CLI and the web use.

    read = read_query('what did Bob say about the "press kit" yesterday?', participants=("alice", "bob"), tz="UTC")
    read.keywords   # ('press kit', 'say')  quoted phrases whole, then the other content words, OR-ed and ranked
    read.since, read.until   # yesterday in the workspace's time zone, as UTC instants
    read.names      # ('bob',)  participants' names: they address each other by name, so names are no evidence

Words are cut exactly as the full-text index cuts them (`keywords.WORD`: letters and digits, unicode-aware), after
dropping possessive and contraction endings ("John's" -> "john", "don't" -> "don"), so a query word is always an
index token; a hyphenated word is its parts, each searched on its own. Stop words go before the cap, so the cap
counts content words only. Dates are read by `dateparser` (relative to now, in the workspace's time zone) and
become a since/until span of the unit they name: a day ("yesterday", "last Tuesday", "on 8 May"), a week ("last
week"), a month ("in March") or a year. Nothing typed can make this function raise.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Protocol, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.memory.keywords import APOSTROPHE_ENDING, STOP_WORDS, WORD
from bot.memory.types import ClearHit, ClearQuery, Viewer


T = TypeVar("T")
DEFAULT_CONTEXT = 3  # neighbours each side of a typed query's hits: best of the widths benchmarks/retrieval.py tries
MAX_QUERY_TERMS = 32  # content words and phrases; bm25 / ts_rank_cd rank the OR of all of them
MAX_QUERY_CHARS = 2_000  # what is read of a pasted wall of text
SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]+)[\"“”«»]")
# A date phrase dateparser found is kept only if it holds one of these: "we", "may", "second" alone are words.
DATE_CUE = re.compile(
    r"\d|\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this|since|week|weekend|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|april|june|july|august|"
    r"september|october|november|december|in|on)\b",
    re.IGNORECASE,
)
# Words of a date phrase that only say when: dropped from the search words. Day and month names and numbers stay,
# since a message often names the day it talks about ("Thursday I'm at the dentist").
RELATIVE_WORDS = frozenset({"yesterday", "today", "tonight", "tomorrow", "ago", "last", "next", "week", "weekend"})
RELATIVE_WORDS |= {"month", "year", "days", "weeks", "months", "years"}


@dataclass(frozen=True)
class ReadQuery:
    """What a typed query asks for, ready for `ClearQuery` (keywords, since, until) and dense search (text)."""

    text: str  # the query as typed (trimmed), for dense and fuzzy search
    keywords: tuple[str, ...]  # phrases first (a keyword with spaces is a phrase), then single words
    names: tuple[str, ...] = ()  # participants' names found in the query (not searched as words)
    since: datetime | None = None
    until: datetime | None = None
    dates: tuple[str, ...] = ()  # the date phrases read, as typed
    parts: tuple[ReadQuery, ...] = ()  # a text of several questions: each one read on its own


def read_query(
    text: str,
    *,
    participants: Iterable[str] = (),  # names of the people talking (handles and display names)
    tz: str = "UTC",  # the workspace's time zone, for relative dates
    now: datetime | None = None,
    max_terms: int = MAX_QUERY_TERMS,
) -> ReadQuery:
    """Read a typed query: phrases, content words, participants' names and a date span."""
    text = text[:MAX_QUERY_CHARS].strip() if isinstance(text, str) else ""
    # One dateparser pass over the whole text serves each of its questions too (the slowest step of reading).
    found = read_dates(QUOTED.sub(" ", text), tz=tz, now=now)
    read = _read(text, participants, found, max_terms)
    parts = tuple(p for part in question_parts(text) if (p := _read(part, participants, found, max_terms)).keywords)
    return replace(read, parts=parts) if len(parts) > 1 else read


def _read(text: str, participants: Iterable[str], found: Sequence[DatePhrase], max_terms: int) -> ReadQuery:
    """One question of a query, with the date phrases `found` in the whole query that it holds."""
    phrases = [p for p in (query_words(q) for q in QUOTED.findall(text)) if p]
    rest = QUOTED.sub(" ", text)
    dates = [d for d in found if d.phrase in rest]
    when = {w for d in dates for w in query_words(d.phrase) if w in RELATIVE_WORDS}
    name_words = {w for name in participants for w in query_words(name)}
    words = [w for w in query_words(rest) if w not in STOP_WORDS and w not in when]
    names = tuple(dict.fromkeys(w for w in words if w in name_words))
    content = [w for w in words if w not in name_words] or list(names)  # a query of names only searches them
    keywords = [" ".join(p) for p in phrases if not all(w in STOP_WORDS for w in p)] + content
    since = min((d.start for d in dates), default=None)  # several phrases: the span covering them
    until = max((d.end for d in dates), default=None)
    return ReadQuery(
        text, tuple(dict.fromkeys(keywords))[:max_terms], names, since, until, tuple(d.phrase for d in dates)
    )


def question_parts(text: str) -> list[str]:
    """The questions of a text that asks several ("When is X? And who owns Y?"), or [] for one question: each is
    searched on its own, so the words of one cannot crowd out the evidence of the other. Only the sentences that
    ask are parts: a lead-in ("Two things were said.") or an instruction ("Reply with both.") finds nothing."""
    parts = [s.strip() for s in SENTENCE_END.split(text) if s.strip().endswith("?") and query_words(s)]
    return parts if len(parts) > 1 else []


class ClearSearch(Protocol):
    async def search(self, viewer: Viewer, query: ClearQuery) -> list[ClearHit]: ...


async def search_typed(
    memory: ClearSearch,
    viewer: Viewer,
    read: ReadQuery,
    *,
    sender: str | None = None,
    channel: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    context_window: int = DEFAULT_CONTEXT,
    limit: int = 10,
) -> list[ClearHit]:
    """Search for a read query. Filters given here win over the dates read from the text. A date read from the
    text ranks the messages of its span first; when they are fewer than `limit`, the best others follow (a question
    about "Thursday" is as often about a plan made earlier as about what was said that day)."""
    filters: dict[str, Any] = {
        "sender": sender, "channel": channel, "since": since, "until": until,
        "context_window": context_window, "limit": limit,
    }  # fmt: skip
    base = ClearQuery(keywords=read.keywords, question=read.text, **filters)
    if read.parts:  # several questions: the best hits of each in turn (searched side by side)
        found = await asyncio.gather(*(search_typed(memory, viewer, part, **filters) for part in read.parts))
        return interleaved(found, key=lambda hit: hit.message.id)[:limit]
    if not (read.keywords or read.text) or not _searchable(memory, base):
        return []
    read_dates = since is None and until is None and (read.since or read.until)
    if not read_dates:
        return await memory.search(viewer, base)
    dated = await memory.search(viewer, replace(base, since=read.since, until=read.until))
    if len(dated) >= limit:
        return dated
    seen = {hit.message.id for hit in dated}
    others = [hit for hit in await memory.search(viewer, base) if hit.message.id not in seen]
    return (dated + others)[:limit]


def interleaved(rankings: Sequence[Sequence[T]], *, key: Callable[[T], Hashable]) -> list[T]:
    """The first of each ranking, then the second of each, ...; each item (told apart by `key`) once, where it
    first comes. The hits of several questions are merged this way, so no question's best hits are crowded out."""
    merged: dict[Hashable, T] = {}
    for rank in range(max(map(len, rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                merged.setdefault(key(ranking[rank]), ranking[rank])
    return list(merged.values())


def _searchable(memory: ClearSearch, query: ClearQuery) -> bool:
    """Lexical-only memory needs a content word; hybrid memory can search by the question's meaning alone."""
    return bool(query.keywords) or getattr(memory, "windows", None) is not None


def query_words(text: str) -> tuple[str, ...]:
    """The index tokens of `text`, lower-cased, with possessive and contraction endings dropped."""
    return tuple(word.lower() for word in WORD.findall(APOSTROPHE_ENDING.sub("", text)))


# ---------------------------------------------------------------------- dates
@dataclass(frozen=True)
class DatePhrase:
    phrase: str  # as typed
    start: datetime  # the first and last instant of the unit it names, UTC
    end: datetime


def read_dates(text: str, *, tz: str, now: datetime | None) -> list[DatePhrase]:
    """The date phrases in `text`, each with the span it names."""
    if not DATE_CUE.search(text):
        return []  # the usual case, and dateparser is slow to find nothing
    zone = _zone(tz)
    local_now = (now or datetime.now(UTC)).astimezone(zone)
    found = []
    for phrase, moment, period in _parsed_dates(text, local_now):
        start, end = _span(moment.astimezone(zone), period)
        found.append(DatePhrase(phrase, start.astimezone(UTC), end.astimezone(UTC)))
    return found


def _parsed_dates(text: str, local_now: datetime) -> list[tuple[str, datetime, str]]:
    settings = {
        "RELATIVE_BASE": local_now.replace(tzinfo=None),
        "TIMEZONE": str(local_now.tzinfo),
        "RETURN_AS_TIMEZONE_AWARE": True,
        "PREFER_DATES_FROM": "past",
    }
    try:
        from dateparser.search import search_dates

        found = search_dates(text, languages=["en"], settings=settings) or []
        parser = _period_parser()
        results = []
        for phrase, moment in found:
            if not _is_date_phrase(phrase):
                continue
            period = parser.get_date_data(phrase).period or "day"
            results.append((phrase, moment if moment.tzinfo else moment.replace(tzinfo=local_now.tzinfo), period))
        return results
    except Exception:  # noqa: BLE001 - a date the library cannot read is no date, never a failed search
        return []


@cache
def _period_parser():  # noqa: ANN202 - dateparser's DateDataParser, imported lazily (slow import)
    from dateparser.date import DateDataParser

    return DateDataParser(languages=["en"])


AMBIGUOUS = frozenset({"may", "march", "second", "now", "sun", "sat", "wed", "mon"})
LEADING = frozenset({"in", "on", "since", "until", "last", "next", "this", "of"})


def _is_date_phrase(phrase: str) -> bool:
    words = query_words(phrase)
    if not words or all(len(w) <= 2 and not w.isdigit() for w in words) or not DATE_CUE.search(phrase):
        return False
    if any(w.isdigit() for w in words):
        return True
    # "may" or "march" are verbs far more often than months: only "in March", "last May"... read as dates.
    content = [w for w in words if w not in LEADING and w not in STOP_WORDS]
    leading = next((w for w in words if w not in STOP_WORDS or w in LEADING), "")
    return not (content and all(w in AMBIGUOUS for w in content) and leading not in LEADING)


def _span(moment: datetime, period: str) -> tuple[datetime, datetime]:
    """The whole unit `period` names around `moment`: its first instant and its last."""
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "week":
        start = day - timedelta(days=day.weekday())
        return start, start + timedelta(days=7, microseconds=-1)
    if period == "month":
        start = day.replace(day=1)
        following = (start + timedelta(days=32)).replace(day=1)
        return start, following - timedelta(microseconds=1)
    if period == "year":
        start = day.replace(month=1, day=1)
        return start, start.replace(year=start.year + 1) - timedelta(microseconds=1)
    if period == "time":
        return moment - timedelta(hours=1), moment + timedelta(hours=1)
    return day, day + timedelta(days=1, microseconds=-1)


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")
