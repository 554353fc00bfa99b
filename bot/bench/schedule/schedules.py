"""Schedule generation as appendix D.2 describes it.

Each person gets a preference vector over every pool activity and a 48-slot time vector. Group activities are
placed first (participants drawn from those who like the activity and are free), then routines (sleep, meals within
their allowed start ranges), then single activities, found with two pointers walking each free stretch.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from bot.bench.schedule.model import Activity, Schedules
from bot.bench.schedule.pools import (
    BEDTIME_RANGE,
    GROUP_POOL,
    GROUP_START_RANGE,
    MEAL_ROUTINES,
    SINGLE_POOL,
    SLEEP,
    WAKE_RANGE,
    GroupActivity,
)
from bot.bench.timeslots import SLOTS_PER_DAY


PLACEMENT_TRIES = 12  # start times tried for one group activity before it is dropped
PAPER = "paper"  # every activity has its pool length (appendix D.2): the default
PER_PERSON = "per-person"  # each person draws each activity's length; a group activity's length is drawn per day
VARIANTS = (PAPER, PER_PERSON)
LENGTH_RANGE = (1, 6)  # slots, for the per-person variant


@dataclass(frozen=True)
class ScheduleSpec:
    people: tuple[str, ...]
    groups: int  # how many group activities to draw
    fill: float  # chance that a free slot starts a single activity
    apart: frozenset[str] = frozenset()  # people who must never share a group activity
    variant: str = PAPER  # how activity lengths are drawn (see VARIANTS)


class DayPlan:
    def __init__(self, people: tuple[str, ...], rng: random.Random) -> None:
        self.rng = rng
        self.busy = {p: [False] * SLOTS_PER_DAY for p in people}
        self.activities: Schedules = {p: [] for p in people}
        self.likes = {p: self._preferences() for p in people}

    def _preferences(self) -> dict[str, bool]:
        names = [a.name for a in SINGLE_POOL] + [a.name for a in GROUP_POOL] + [r.name for r in MEAL_ROUTINES]
        return {name: self.rng.random() < 0.6 for name in names}

    def is_free(self, person: str, start: int, end: int) -> bool:
        return not any(self.busy[person][start:end]) and 0 <= start < end <= SLOTS_PER_DAY

    def book(self, person: str, activity: Activity) -> None:
        for slot in range(activity.start, activity.end):
            self.busy[person][slot] = True
        self.activities[person].append(activity)


def generate_schedules(spec: ScheduleSpec, rng: random.Random) -> Schedules:
    plan = DayPlan(spec.people, rng)
    for group in rng.sample(GROUP_POOL, spec.groups):
        if spec.variant == PER_PERSON:
            group = replace(group, slots=rng.randint(*LENGTH_RANGE))
        _place_group(plan, group, spec.apart)
    for person in spec.people:
        _place_routines(plan, person)
        _place_singles(plan, person, spec.fill, per_person=spec.variant == PER_PERSON)
    return {person: sorted(acts) for person, acts in plan.activities.items()}


def _place_group(plan: DayPlan, group: GroupActivity, apart: frozenset[str]) -> None:
    low, high = GROUP_START_RANGE
    for _ in range(PLACEMENT_TRIES):
        start = plan.rng.randint(low, high - group.slots)
        end = start + group.slots
        eligible = [p for p in plan.busy if plan.likes[p][group.name] and plan.is_free(p, start, end)]
        if len(eligible) < group.participants:
            continue
        chosen = tuple(sorted(plan.rng.sample(eligible, group.participants)))
        if len(apart.intersection(chosen)) > 1:
            continue
        for person in chosen:
            plan.book(person, Activity(start, end, group.name, "group", chosen))
        return


def _place_routines(plan: DayPlan, person: str) -> None:
    wake = plan.rng.randint(*WAKE_RANGE)
    bedtime = plan.rng.randint(*BEDTIME_RANGE)
    plan.book(person, Activity(0, wake, SLEEP, "sleep"))
    plan.book(person, Activity(bedtime, SLOTS_PER_DAY, SLEEP, "sleep"))
    for meal in MEAL_ROUTINES:
        if not plan.likes[person][meal.name]:
            continue
        starts = [
            s for s in range(meal.earliest_start, meal.latest_start + 1) if plan.is_free(person, s, s + meal.slots)
        ]
        if starts:
            start = plan.rng.choice(starts)
            plan.book(person, Activity(start, start + meal.slots, meal.name, "routine"))


def _place_singles(plan: DayPlan, person: str, fill: float, *, per_person: bool = False) -> None:
    """Two pointers: `left` opens a free stretch, `right` closes it; singles are laid in from the left."""
    unused = [a for a in SINGLE_POOL if plan.likes[person][a.name]]
    if per_person:
        unused = [replace(a, slots=plan.rng.randint(*LENGTH_RANGE)) for a in unused]
    left = 0
    while left < SLOTS_PER_DAY:
        if plan.busy[person][left]:
            left += 1
            continue
        right = left
        while right < SLOTS_PER_DAY and not plan.busy[person][right]:
            right += 1
        _fill_stretch(plan, person, left, right, unused, fill)
        left = right


def _fill_stretch(plan: DayPlan, person: str, left: int, right: int, unused: list, fill: float) -> None:
    position = left
    while position < right:
        fitting = [a for a in unused if a.slots <= right - position]
        if fitting and plan.rng.random() < fill:
            single = plan.rng.choice(fitting)
            unused.remove(single)
            plan.book(person, Activity(position, position + single.slots, single.name, "single"))
            position += single.slots
        else:
            position += plan.rng.choice((1, 2))
