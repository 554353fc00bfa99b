"""Members' time zones: IANA names checked against the zone database, the closest ones for a typo, and which zone a
member reads times in (their own choice, else their platform profile's, else the workspace's).

    known_zone("europe/paris")     # "Europe/Paris"
    known_zone("Mars/Olympus")     # None
    chosen_zone("auto")            # None: back to the profile's or the workspace's zone
    close_zones("Europe/Pari")     # ["Europe/Paris"]
    member_zone(None, "America/Los_Angeles")  # "America/Los_Angeles"; None when neither names a zone
"""

from __future__ import annotations

import difflib
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from bot.errors import UnknownTimeZoneError


AUTO_WORDS = frozenset({"auto", "clear", "default", "reset", "none"})  # `/askwith timezone auto`: no zone of one's own
CLOSE = 0.6  # difflib's similarity for a typo ("Europe/Pari" ~ "Europe/Paris": 0.96)
MAX_ZONE_LENGTH = 64  # the stored column's width; the longest IANA name is 32 characters


@cache
def _zones() -> dict[str, str]:
    """Every IANA zone name, keyed by its case-folded spelling ("europe/paris" -> "Europe/Paris")."""
    return {name.casefold(): name for name in available_timezones()}


def known_zone(name: str | None) -> str | None:
    """`name` spelt as the zone database spells it when it names a zone (any case), else None."""
    typed = (name or "").strip()
    if not typed or len(typed) > MAX_ZONE_LENGTH:
        return None
    spelt = _zones().get(typed.casefold(), typed)
    try:
        ZoneInfo(spelt)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a path-like name ("../x") the loader refuses
        return None
    return spelt


def close_zones(name: str, limit: int = 3) -> list[str]:
    """The zone names closest to a mistyped `name` (case-insensitive), best first; empty when none is close."""
    zones = _zones()
    return [zones[k] for k in difflib.get_close_matches(name.strip().casefold(), list(zones), limit, CLOSE)]


def chosen_zone(typed: str) -> str | None:
    """The zone a member typed after `/askwith timezone`: its IANA spelling, or None for `auto` (or `clear`);
    UnknownTimeZoneError, with the closest names, for anything else."""
    if typed.strip().casefold() in AUTO_WORDS:
        return None
    if (zone := known_zone(typed)) is None:
        raise UnknownTimeZoneError(typed.strip(), close_zones(typed, limit=1))
    return zone


def member_zone(chosen: str | None, platform: str | None) -> str | None:
    """The zone a member reads times in: the one they chose, else their platform profile's; None means the
    workspace's (the caller's default)."""
    return known_zone(chosen) or known_zone(platform)
