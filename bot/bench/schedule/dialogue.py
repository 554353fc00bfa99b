"""Render a chat between two people from their schedules (the template path; an LLM paraphrase may come later).

Every activity is stated once per chat by its owner, in the first person, with its start and end time; sleep is
stated as "sleep until H:MM" (from midnight) or "bed at H:MM" (to midnight). Appendix D.2's naming rule holds: a
group activity names its other participants only when the listener takes part too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import zip_longest

from bot.bench.schedule.model import Activity, Schedules
from bot.bench.timeslots import clock
from bot.store.world import World


OWN = (
    "I've got {act} from {start} to {end}.",
    "From {start} to {end} I have {act}.",
    "My {act} runs {start}-{end}.",
    "I'm booked for {act}, {start} to {end}.",
    "Then I have {act} from {start} until {end}.",
    "I set aside {start} to {end} for {act}.",
    "{Act} keeps me busy between {start} and {end}.",
)
SHARED = (
    "We're both at the {act} from {start} to {end}{others}.",
    "Don't forget our {act} from {start} to {end}{others}!",
    "See you at the {act}, {start} to {end}{others}.",
)
WAKE = ("I'm sleeping until {end} this morning.", "I'll sleep in until {end}.", "I plan to sleep until {end} today.")
BEDTIME = ("I'm going to bed at {start}.", "I'll head to bed at {start} tonight.", "Bed at {start} for me.")
REACTIONS = ("", "Nice. ", "Sounds good! ", "Got it. ", "Okay! ", "Oh, fun. ", "Noted. ", "Right. ")
GREETING = "Good morning, {listener}! Shall we go over our plans for today?"
GREETING_REPLY = "Morning, {listener}! Sure, here is my day."
CLOSING = ("That's all from me. Have a great day!", "That's my whole day. Talk later!")
DAY_START = datetime.fromisoformat("2024-06-03T05:00:00+00:00")  # fixed, so files are byte-identical


@dataclass(frozen=True)
class Statement:
    message_id: str
    channel_id: str
    speaker: str
    activity: Activity


def display(person: str) -> str:
    return person.capitalize()


def state(activity: Activity, speaker: str, listener: str, rng: random.Random) -> str:
    """One first-person sentence stating one of the speaker's activities."""
    start, end = clock(activity.start), clock(activity.end)
    if activity.is_sleep:
        return rng.choice(WAKE if activity.start == 0 else BEDTIME).format(start=start, end=end)
    if listener in activity.participants:
        others = [display(p) for p in activity.participants if p not in (speaker, listener)]
        tail = f", together with {' and '.join(others)}" if others else ""
        return rng.choice(SHARED).format(act=activity.name, start=start, end=end, others=tail)
    template = rng.choice(OWN)
    return template.format(act=activity.name, Act=activity.name.capitalize(), start=start, end=end)


def render_chat(
    world: World, schedules: Schedules, hub: str, friend: str, rng: random.Random, *, minute: int
) -> list[Statement]:
    """Write the hub-friend DM into the world; returns what each message states. `minute` offsets timestamps."""
    channel = world.dm(hub, friend)
    statements: list[Statement] = []

    def post(sender: str, text: str, activity: Activity | None) -> None:
        nonlocal minute
        message_id = f"{world.id}-m{world.message_count() + 1:03d}"
        ts = DAY_START + timedelta(minutes=minute)
        world.add_message(channel.id, sender, text, ts=ts, message_id=message_id)
        minute += 1
        if activity is not None:
            statements.append(Statement(message_id, channel.id, sender, activity))

    post(hub, GREETING.format(listener=display(friend)), None)
    post(friend, GREETING_REPLY.format(listener=display(hub)), None)
    for mine, theirs in zip_longest(schedules[hub], schedules[friend]):
        if mine is not None:
            post(hub, _reaction(rng, theirs is not None) + state(mine, hub, friend, rng), mine)
        if theirs is not None:
            post(friend, _reaction(rng, mine is not None) + state(theirs, friend, hub, rng), theirs)
    post(hub, rng.choice(CLOSING), None)
    return statements


def _reaction(rng: random.Random, answering: bool) -> str:
    """A short reaction opens a turn that answers the other person's last line."""
    return rng.choice(REACTIONS) if answering else ""
