"""The activity pools of appendix D.2 and the people of a Schedule item.

Durations are in half-hour slots. Activity names are noun phrases that are never part of one another, so the
verifier can read them back out of the dialogue text unambiguously.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SingleActivity:
    name: str
    slots: int


@dataclass(frozen=True)
class GroupActivity:
    name: str
    slots: int
    participants: int


@dataclass(frozen=True)
class Routine:
    name: str
    slots: int
    earliest_start: int  # slot
    latest_start: int  # slot


SINGLE_POOL: tuple[SingleActivity, ...] = (
    SingleActivity("reading", 3),
    SingleActivity("yoga", 2),
    SingleActivity("piano practice", 2),
    SingleActivity("jogging", 2),
    SingleActivity("painting", 5),
    SingleActivity("gardening", 3),
    SingleActivity("video games", 4),
    SingleActivity("knitting", 2),
    SingleActivity("meditation", 1),
    SingleActivity("grocery shopping", 2),
    SingleActivity("studying", 5),
    SingleActivity("swimming", 3),
    SingleActivity("journaling", 1),
    SingleActivity("laundry", 2),
    SingleActivity("baking", 3),
    SingleActivity("photography walk", 3),
)

GROUP_POOL: tuple[GroupActivity, ...] = (
    GroupActivity("conference call", 3, 3),
    GroupActivity("cooking class", 3, 2),
    GroupActivity("team meeting", 2, 4),
    GroupActivity("basketball game", 4, 4),
    GroupActivity("board game night", 5, 3),
    GroupActivity("movie screening", 3, 2),
    GroupActivity("book club", 3, 3),
    GroupActivity("hiking trip", 6, 2),
    GroupActivity("volunteer shift", 3, 3),
    GroupActivity("dance lesson", 2, 2),
    GroupActivity("escape room", 2, 4),
    GroupActivity("pottery workshop", 3, 2),
)

# Meals have allowed start ranges; sleep is handled apart (it opens and closes the day).
MEAL_ROUTINES: tuple[Routine, ...] = (
    Routine("breakfast", 1, 13, 18),  # starts 6:30-9:00
    Routine("lunch", 2, 22, 27),  # starts 11:00-13:30
    Routine("dinner", 2, 35, 40),  # starts 17:30-20:00
)
SLEEP = "sleep"
WAKE_RANGE = (12, 16)  # morning sleep ends 6:00-8:00
BEDTIME_RANGE = (42, 47)  # night sleep starts 21:00-23:30 and runs to midnight
GROUP_START_RANGE = (16, 42)  # group activities happen between 8:00 and 21:00

ALL_NAMES: tuple[str, ...] = tuple(
    sorted({a.name for a in SINGLE_POOL} | {a.name for a in GROUP_POOL} | {r.name for r in MEAL_ROUTINES} | {SLEEP})
)

# People of an item (the paper's names). Party 1 is Alice's, party 2 Dave's; chats are hub-to-friend DMs.
PEOPLE = ("alice", "bob", "charlie", "dave", "emily", "franklin")
PARTIES = (("alice", "bob", "charlie"), ("dave", "emily", "franklin"))
EASY_PEOPLE = ("alice", "bob", "dave", "emily")
ASKING_PAIR = ("alice", "dave")
