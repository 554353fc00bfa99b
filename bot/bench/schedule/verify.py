"""The Schedule verifier: recomputes every gold answer on a separate code path and reports any disagreement.

For each item it (1) reads the schedules back out of the dialogue text the asking members can see, (2) checks they
equal the schedules the generator recorded, and (3) recomputes the gold answer from both with algorithms other than
the generator's: Easy by maximum bipartite matching (König: least deletions = largest matching in the conflict
graph), Medium by a duration table, Hard by a 48-slot occupancy vector.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from bot.bench.items import BenchItem, load_items, load_world
from bot.bench.schedule.model import schedules_from_json
from bot.bench.schedule.pools import ALL_NAMES, SLEEP
from bot.bench.timeslots import SLOTS_PER_DAY, format_span, spans_of, times_in
from bot.store.world import World


Entry = tuple[str, int, int]  # (activity name, start slot, end slot)
_NAME_RES = [(name, re.compile(rf"\b{re.escape(name)}\b", re.IGNORECASE)) for name in ALL_NAMES if name != SLEEP]
_SLEEP_RE = re.compile(r"\bsleep", re.IGNORECASE)
_BED_RE = re.compile(r"\bbed\b", re.IGNORECASE)


@dataclass
class VerifyReport:
    items: int = 0
    agreed: int = 0
    problems: list[str] = field(default_factory=list)


def read_entry(text: str) -> Entry | None:
    """The activity a message states, or None for small talk. Raises ValueError when a message is ambiguous."""
    times = times_in(text)
    if not times:
        return None
    names = [name for name, pattern in _NAME_RES if pattern.search(text)]
    if len(times) == 1 and not names and _SLEEP_RE.search(text):
        return (SLEEP, 0, times[0])
    if len(times) == 1 and not names and _BED_RE.search(text):
        return (SLEEP, times[0], SLOTS_PER_DAY)
    if len(times) == 2 and len(names) == 1:
        return (names[0], times[0], times[1])
    raise ValueError(f"cannot read one activity from {text!r}")


def read_schedules(world: World, viewers: tuple[str, ...]) -> dict[str, set[Entry]]:
    """Every person's activities as stated in the channels the viewers can see (the speaker owns the activity)."""
    seen: dict[str, set[Entry]] = {}
    channels = {c.id for viewer in viewers for c in world.visible_channels(viewer)}
    for channel_id in sorted(channels):
        for message in world.messages[channel_id]:
            entry = read_entry(message.text)
            if entry is not None:
                seen.setdefault(message.sender_id, set()).add(entry)
    return seen


def least_deletions(first: set[Entry], second: set[Entry]) -> int:
    """Maximum matching in the bipartite conflict graph (Kuhn's augmenting paths)."""
    left = sorted(e for e in first if e[0] != SLEEP)
    right = sorted(e for e in second if e[0] != SLEEP)
    edges = {i: [j for j, b in enumerate(right) if a[1] < b[2] and b[1] < a[2]] for i, a in enumerate(left)}
    match: dict[int, int] = {}

    def augment(i: int, visited: set[int]) -> bool:
        for j in edges[i]:
            if j not in visited:
                visited.add(j)
                if j not in match or augment(match[j], visited):
                    match[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in edges)


def longest_names(schedules: dict[str, set[Entry]]) -> list[str]:
    durations: dict[str, int] = {}
    for entries in schedules.values():
        for name, start, end in entries:
            if name != SLEEP:
                durations[name] = max(durations.get(name, 0), end - start)
    top = max(durations.values())
    return sorted(name for name, length in durations.items() if length == top)


def free_spans(schedules: dict[str, set[Entry]]) -> list[str]:
    occupied = [0] * SLOTS_PER_DAY
    for entries in schedules.values():
        for _, start, end in entries:
            for slot in range(start, end):
                occupied[slot] += 1
    return [format_span(span) for span in spans_of(s for s in range(SLOTS_PER_DAY) if not occupied[s])]


def recompute(level: str, schedules: dict[str, set[Entry]], asking: tuple[str, str]) -> object:
    if level == "easy":
        return least_deletions(schedules.get(asking[0], set()), schedules.get(asking[1], set()))
    if level == "medium":
        return longest_names(schedules)
    return free_spans(schedules)


def gold_value(item: BenchItem) -> object:
    level = item.provenance["level"]
    return {"easy": item.gold.get("count"), "medium": item.gold.get("activities"), "hard": item.gold.get("spans")}[
        level
    ]


def verify_item(item: BenchItem, world: World) -> list[str]:
    level = item.provenance["level"]
    recorded = {
        person: {(a.name, a.start, a.end) for a in acts}
        for person, acts in schedules_from_json(item.provenance["schedules"]).items()
    }
    try:
        stated = read_schedules(world, item.asking)
    except ValueError as exc:
        return [f"{item.id}: {exc}"]
    problems = [
        f"{item.id}: {person}'s schedule as stated differs from the recorded one"
        for person in item.provenance["needed"]
        if stated.get(person) != recorded[person]
    ]
    for source, schedules in (("recorded schedules", recorded), ("dialogue text", stated)):
        value = recompute(level, schedules, item.asking)
        if value != gold_value(item):
            problems.append(f"{item.id}: gold {gold_value(item)!r} but the {source} give {value!r}")
    return problems


def verify_dataset(directory: Path) -> VerifyReport:
    report = VerifyReport()
    for item in load_items(directory):
        problems = verify_item(item, load_world(directory, item))
        report.items += 1
        report.agreed += not problems
        report.problems.extend(problems)
    return report
