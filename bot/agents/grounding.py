"""Grounding: what every prompt says about the ask itself (today, who is asking whom, where it was asked).

"When are you free on Thursday?" needs today's date and time zone; "ask Bob" needs to know Bob is the partner and who
else is being asked. One template (`agent.yaml: grounding`) renders it into every system prompt of the ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.prompts import render_prompt


@dataclass(frozen=True)
class Grounding:
    now: datetime  # aware, in the ask's time zone
    timezone: str
    requester: str  # handle
    colleagues: tuple[str, ...]  # handles of everyone asked
    origin: str  # where the ask was typed, in words ("#launch-team, in a thread", "a direct message")
    names: dict[str, str] = field(default_factory=dict)  # handle -> display name

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
        )
