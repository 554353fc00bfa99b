"""Gold answers by algorithm (the generator's path; `verify.py` recomputes them another way).

Easy: the activities of the two asking members (sleep excluded) form one set S of half-open slot intervals; two
activities overlap when their intervals intersect. The answer is the least number of activities to delete from S
so that no two remaining ones overlap = |S| - the largest set of pairwise non-overlapping intervals in S, found by
the earliest-end greedy of interval scheduling. (Each member's own activities never overlap, so every conflict is
between the two members.)
Medium: the name(s) of the longest activity over all six schedules, sleep excluded; ties give several names.
Hard: every maximal span of slots in which none of the six has any activity (sleep included).
"""

from __future__ import annotations

from bot.bench.schedule.model import Activity, Schedules
from bot.bench.timeslots import SLOTS_PER_DAY, Span


def min_deletions(first: list[Activity], second: list[Activity]) -> int:
    intervals = sorted((a.end, a.start) for a in first + second if not a.is_sleep)
    kept, last_end = 0, -1
    for end, start in intervals:
        if start >= last_end:
            kept, last_end = kept + 1, end
    return len(intervals) - kept


def longest_activities(schedules: Schedules) -> list[str]:
    awake = [a for acts in schedules.values() for a in acts if not a.is_sleep]
    longest = max(a.slots for a in awake)
    return sorted({a.name for a in awake if a.slots == longest})


def common_free_spans(schedules: Schedules) -> list[Span]:
    busy = sorted((a.start, a.end) for acts in schedules.values() for a in acts)
    free: list[Span] = []
    cursor = 0
    for start, end in busy:
        if start > cursor:
            free.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < SLOTS_PER_DAY:
        free.append((cursor, SLOTS_PER_DAY))
    return free
