"""What an ask is asked with (`AskRequest`) and what running it gives back (`AskOutcome`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.agents.multiparty import AskResult


# An ask that a group (a user group, a role) makes this large or larger waits for its asker to confirm: one click
# should not set many colleagues' agents working by surprise.
GROUP_CONFIRM_ABOVE = 5


@dataclass(frozen=True)
class AskRequest:
    requester: str  # handle or platform id
    colleagues: list[str]
    question: str
    origin_channel_id: str | None = None  # where to answer; None = the requester's DM
    origin_thread_id: str | None = None
    ablations: list[str] = field(default_factory=list)
    follow_up_of: int | None = None  # an earlier ask this continues (colleagues default to its colleagues)
    context: str | None = None  # a thread's text, one message a line ("ask about this thread")


@dataclass
class AskOutcome:
    ask_id: int
    status: str
    answer: str | None
    failure: str | None
    final_text: str
    result: AskResult | None  # None when this run only delivered an earlier result
    wall_s: float
