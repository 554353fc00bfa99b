"""Grounding: what every prompt says about the ask itself (today, who is asking whom, where it was asked).

"When are you free on Thursday?" needs today's date and time zone; "ask Bob" needs to know Bob is the partner and who
else is being asked. One template (`agent.yaml: grounding`) renders it into every system prompt of the ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.base.prompts import render_prompt


@dataclass(frozen=True)
class Grounding:
    now: datetime  # aware, in the ask's time zone
    timezone: str
    requester: str  # handle
    colleagues: tuple[str, ...]  # handles of everyone asked
    origin: str  # where the ask was typed, in words ("#launch-team, in a thread", "a direct message")
    names: dict[str, str] = field(default_factory=dict)  # handle -> display name
    # Background the requester gave (bot.asks.background), shown to the requester's agents only: earlier
    # (question, answer) pairs of a follow-up, and the lines of a thread the ask is about (newest kept).
    earlier: tuple[tuple[str, str], ...] = ()
    thread: tuple[str, ...] = ()
    thread_cut: int = 0  # thread lines left out for the budget

    @classmethod
    def at(cls, timezone: str, **fields: object) -> Grounding:
        try:
            zone = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            zone, timezone = ZoneInfo("UTC"), "UTC"  # a bad setting must not fail asks: ground in UTC, say so
        return cls(now=datetime.now(UTC).astimezone(zone), timezone=timezone, **fields)  # type: ignore[arg-type]

    def name(self, handle: str) -> str:
        display = self.names.get(handle, "")
        return f"{display} (@{handle})" if display and display != handle else f"@{handle}"

    def render(self, me: str, partner: str | None) -> str:
        others = [self.name(c) for c in self.colleagues if c not in (me, partner)]
        return render_prompt(
            "agent",
            "grounding",
            today=f"{self.now:%A %Y-%m-%d %H:%M}",
            timezone=self.timezone,
            requester=self.name(self.requester),
            me=self.name(me),
            partner=self.name(partner) if partner else "",
            everyone=[self.name(c) for c in self.colleagues],
            others=others,
            origin=self.origin,
            # A colleague's agent never reads it: it may hold what only the requester could see.
            earlier=self.earlier if me == self.requester else (),
            thread=self.thread if me == self.requester else (),
            thread_cut=self.thread_cut if me == self.requester else 0,
        )
