"""A day as 48 half-hour slots: slot i covers [i*30 min, (i+1)*30 min). Spans are half-open (start, end) slot pairs.

Clock text is "H:MM" on a 24-hour clock ("9:00", "13:30"; the end of the day is "24:00"). `parse_spans` also reads
the forms an answer may use ("9 AM to 12 PM", "10:00–14:00") so the Hard scorer can read free-form predictions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


SLOTS_PER_DAY = 48
Span = tuple[int, int]

_CLOCK = r"(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?"
_SPAN_RE = re.compile(rf"(?<![\d:]){_CLOCK}\s*(?:-|–|—|to|until|till)\s*{_CLOCK}(?![\d:])", re.IGNORECASE)
_TIME_RE = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])")
_BETWEEN_RE = re.compile(rf"\bbetween\s+({_CLOCK})\s+and\s+", re.IGNORECASE)


def clock(slot: int) -> str:
    """Slot index (0..48) to "H:MM"."""
    if not 0 <= slot <= SLOTS_PER_DAY:
        raise ValueError(f"slot {slot} is outside the day")
    return f"{slot // 2}:{'30' if slot % 2 else '00'}"


def format_span(span: Span) -> str:
    return f"{clock(span[0])}-{clock(span[1])}"


def slot_of(hour: int, minute: int = 0, meridiem: str | None = None) -> int:
    """Clock time to a slot (minutes round down to the half hour)."""
    if meridiem:
        is_pm = meridiem.lower().startswith("p")
        hour = hour % 12 + (12 if is_pm else 0)
    if not (0 <= hour <= 24 and 0 <= minute < 60) or (hour == 24 and minute):
        raise ValueError(f"{hour}:{minute:02d} is not a time of day")
    return hour * 2 + minute // 30


def times_in(text: str) -> list[int]:
    """Every "H:MM" time in a text, as slots, in order of appearance."""
    return [slot_of(int(h), int(m)) for h, m in _TIME_RE.findall(text)]


def parse_spans(text: str) -> list[Span]:
    """Every "start-end" time span in a text ("9:00-11:00", "9 AM to 12 PM", "between 13:30 and 16:00")."""
    text = _BETWEEN_RE.sub(lambda m: f"{m.group(1)} to ", text)
    spans: list[Span] = []
    for match in _SPAN_RE.finditer(text):
        h1, m1, ap1, h2, m2, ap2 = match.groups()
        if m1 is None and ap1 is None and m2 is None and ap2 is None:
            continue  # "3-4" alone is more likely a count than a time span
        try:
            start = slot_of(int(h1), int(m1 or 0), ap1 or (ap2 if int(h1) <= 12 else None))
            end = slot_of(int(h2), int(m2 or 0), ap2)
        except ValueError:
            continue
        if ap1 is None and ap2 and start > end and int(h1) <= 12:
            start = slot_of(int(h1), int(m1 or 0), None)  # "11 to 2 pm": the start is the morning
        if end > start:
            spans.append((start, end))
    return spans


def slots_of(spans: Iterable[Span]) -> set[int]:
    return {slot for start, end in spans for slot in range(start, end)}


def spans_of(slots: Iterable[int]) -> list[Span]:
    """Maximal runs of consecutive slots, in order."""
    spans: list[Span] = []
    for slot in sorted(set(slots)):
        if spans and spans[-1][1] == slot:
            spans[-1] = (spans[-1][0], slot + 1)
        else:
            spans.append((slot, slot + 1))
    return spans
