"""Who may open what: the signed-in identity and the transcript access rule (pure).

Transcripts are visible to the conversation's participants and to the admins of their workspace only. A participant
is the member who asked, a colleague they asked, or a member whose agent was brought into a sub-conversation.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class Identity:
    workspace_id: int
    member: str  # handle
    platform_id: str
    display_name: str
    is_admin: bool = False
    time_zone: str | None = None  # the zone pages show times in (chosen, else the profile's); None: the browser's


def is_admin(member: str, platform_id: str, admins: Collection[str]) -> bool:
    return member in admins or platform_id in admins


def may_open(viewer: Identity, *, workspace_id: int | None, participants: Collection[str]) -> bool:
    """Whether `viewer` may open a record (ask or negotiation) of `workspace_id` with these participants."""
    if workspace_id != viewer.workspace_id:
        return False  # an admin too: a handle means nothing in another workspace
    return viewer.is_admin or viewer.member in participants


def may_follow(viewer: Identity, *, workspace_id: int, requester: str) -> bool:
    """Whether `viewer` may follow an ask live (its progress, answer page, cancel, feedback, follow-up): the member
    who asked, and admins of its workspace."""
    return workspace_id == viewer.workspace_id and (viewer.is_admin or viewer.member == requester)
