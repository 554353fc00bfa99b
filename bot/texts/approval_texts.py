"""The texts of sharing and its approval: the prompt a member approves a share on, what they read after answering it,
what they read after their agent shared, and what the requester reads when a colleague kept something back.

    approval_texts.approval_title("alice")    # "alice asked something your agent can answer. Share this?"
    approval_texts.approval_confirmed("denied", "alice")
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.texts.conversation_texts import without_ids


def share_withheld(name: str, how: str) -> str:
    """A colleague asked to approve a share said no (`how` = "denied") or did not answer in time ("timeout")."""
    if how == "timeout":
        return f"{name} did not answer the request to share in time, so their agent shared nothing there."
    return f"{name} chose not to share that, so their agent kept it back."


def approval_title(owner_requester: str, *, kind: str = "turn") -> str:
    """The prompt's title; a relay (your words, passed on by another agent) says so, since the member's own agent
    is not the one speaking."""
    if kind == "relay":
        return f"Your words would be passed on in {owner_requester}'s ask. Share them?"
    return f"{owner_requester} asked something your agent can answer. Share this?"


def approval_note_source() -> str:
    """A source of an approval card that is a note the member's agent made, not a message."""
    return "A note your agent made from your messages"


def approval_confirmed(decision: str, audience: str) -> str:
    """What the member reads after answering an approval prompt."""
    if decision == "approved_all":
        return f"Approved: your agent shares this, and everything else it says in this ask, with {audience}."
    if decision == "approved":
        return f"Approved: your agent shares exactly this with {audience}."
    if decision == "denied":
        return "Denied: nothing of it is shared. The ask goes on without it, and says so."
    if decision == "timeout":
        return "Nobody answered in time, so nothing of it was shared."
    return ""


def share_notice(requester: str, question: str, shared: Iterable[str]) -> str:
    """What a colleague reads after their agent shared: `requester` by display name, each text as it left but without
    the ids agents cite by, set off as a quote."""
    texts = [t for t in (" ".join(without_ids(s).split()) for s in shared) if t]
    lines = "\n".join(f"> {text}" for text in texts)
    return f"Your askwith agent answered {requester}'s question \u201c{question}\u201d and shared:\n{lines}"
