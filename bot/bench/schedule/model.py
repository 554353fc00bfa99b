"""A scheduled activity and a day's schedules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.bench.schedule.pools import SLEEP


@dataclass(frozen=True, order=True)
class Activity:
    start: int  # slot
    end: int  # slot, exclusive
    name: str
    kind: str  # "single" | "group" | "routine" | "sleep"
    participants: tuple[str, ...] = ()  # every participant of a group activity (the owner included)

    @property
    def slots(self) -> int:
        return self.end - self.start

    @property
    def is_sleep(self) -> bool:
        return self.name == SLEEP

    def to_list(self) -> list[Any]:
        return [self.name, self.start, self.end, self.kind, list(self.participants)]

    @classmethod
    def from_list(cls, raw: list[Any]) -> Activity:
        return cls(raw[1], raw[2], raw[0], raw[3], tuple(raw[4]))


Schedules = dict[str, list[Activity]]  # person -> activities sorted by start


def schedules_to_json(schedules: Schedules) -> dict[str, list[list[Any]]]:
    return {person: [a.to_list() for a in sorted(acts)] for person, acts in sorted(schedules.items())}


def schedules_from_json(raw: dict[str, list[list[Any]]]) -> Schedules:
    return {person: sorted(Activity.from_list(a) for a in acts) for person, acts in raw.items()}
