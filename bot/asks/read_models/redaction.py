"""Which memory hits a transcript viewer may read: the hit-redaction rule, as pure functions.

An agent searches its own member's memory. In a transcript, the viewer reads a hit's text only when

- the viewer *is* that member (it is their own memory), or
- the hit lies in a channel the viewer belongs to (they can read it in the chat anyway).

Every other hit is withheld and only counted: "2 messages from Bob's memory". Admins get no exception: they see
that memory was searched and how much was found, not what other members' private conversations say. A hit whose
message no longer exists (unknown channel) is withheld too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Hit:
    id: str  # message platform id, or "session:<key>" for a fuzzy-memory session
    channel_id: int | None  # store id of the channel it is in; None when it cannot be found any more
    channel_name: str = ""
    sender: str = ""  # handle ("" for a session)
    ts: datetime | None = None
    text: str = ""  # message text, or a session's summary


@dataclass(frozen=True)
class RedactedHits:
    owner: str  # handle of the member whose memory was searched
    shown: tuple[Hit, ...]
    withheld: int

    @property
    def total(self) -> int:
        return len(self.shown) + self.withheld


def may_read_hit(viewer: str, owner: str, hit: Hit, viewer_channels: frozenset[int]) -> bool:
    """Whether `viewer` (a handle) may read a hit from `owner`'s memory, given the channels the viewer belongs to."""
    if hit.channel_id is None:
        return False
    return viewer == owner or hit.channel_id in viewer_channels


def redact_hits(viewer: str, owner: str, hits: Iterable[Hit], viewer_channels: frozenset[int]) -> RedactedHits:
    shown: list[Hit] = []
    withheld = 0
    for hit in hits:
        if may_read_hit(viewer, owner, hit, viewer_channels):
            shown.append(hit)
        else:
            withheld += 1
    return RedactedHits(owner, tuple(shown), withheld)


def withheld_label(count: int, owner_display: str) -> str:
    noun = "message" if count == 1 else "messages"
    return f"{count} {noun} from {owner_display}'s memory"
