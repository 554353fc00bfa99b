"""What the viewer-scoped memory API takes and returns.

Every read names a `Viewer`: the member on whose behalf it runs. Results only ever hold messages that member can see
(channels they belong to, DMs they are party to) minus the channels their policy excludes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Viewer:
    workspace_id: int
    member_id: int  # database id of the member
    name: str = ""  # handle, for display


@dataclass(frozen=True)
class MessageView:
    id: str  # platform id
    channel_id: str  # platform id
    channel_name: str
    sender: str  # sender's handle
    ts: datetime
    text: str

    def dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ts": self.ts.isoformat()}


@dataclass(frozen=True)
class ClearQuery:
    keywords: tuple[str, ...]  # a keyword with spaces is a phrase, kept whole
    sender: str | None = None  # handle or platform id
    channel: str | None = None  # channel name or platform id
    since: datetime | None = None
    until: datetime | None = None
    context_window: int = 0  # neighbouring messages (same channel) on each side of a hit
    limit: int = 10
    question: str = ""  # the question as typed, for hybrid retrieval's dense side ("" = the keywords)


@dataclass(frozen=True)
class ClearHit:
    message: MessageView
    score: float  # higher is better
    context: tuple[MessageView, ...] = ()  # neighbours in channel order, the hit included
    duplicates: int = 0  # fan-out copies (same sender, text and time) collapsed into this hit


@dataclass(frozen=True)
class FuzzyQuery:
    text: str
    top_k: int = 3
    expand: bool = False  # include each hit session's messages


@dataclass(frozen=True)
class FuzzyHit:
    session_key: str
    channel_id: str
    channel_name: str
    summary: str
    summary_method: str  # llm | extractive
    score: float  # higher is better: summary similarity fused with the rank of the session's best messages
    first_ts: datetime
    last_ts: datetime
    messages: tuple[MessageView, ...] = field(default_factory=tuple)  # with `expand`: the whole session
    matches: tuple[MessageView, ...] = field(default_factory=tuple)  # the session's best-matching messages
