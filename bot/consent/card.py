"""The approval card: what an `ask` member reads before their agent passes a text on, as one typed view that every
surface renders (the web page, Slack's blocks, Discord's embed, the terminal's plain text).

The card holds only what the approving member may see: the question, who asks (by display name), the exact text
that would leave (once, without the ids agents cite by), the member's own memory lines it rests on as readable
references, who will see it (by name) and the deadline in the member's time zone.

    card = ApprovalCard(title=..., question="When is the launch?", asker="Alice Chen", lead=LEADS["turn"],
                        quote="The launch is on 14 March.", sources=(SourceRef("your DM with Erin, 16 Nov 11:05"),),
                        audience=("Alice Chen",), deadline=deadline, zone="Europe/Paris")
    card.answer_by      # "Answer by 12:15 Europe/Paris time (Sun 29 Nov); no answer means it is not shared."
    plain_text(card)    # the same card where a surface has no layout (terminal, a fallback notification)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


APPROVE = "Approve"
DENY = "Deny"
APPROVE_ALL = "Approve all in this ask"
APPROVE_ALL_MEANS = (
    "Approve all in this ask: your agent shares this and anything else it says in this ask with the same people, "
    "without asking you again."
)
SOURCES_HEADING = "Where it comes from"
QUESTION_HEADING = "Question"
AUDIENCE_HEADING = "Who will see it"
LEADS = {
    "turn": "Your agent would say",
    "statement": "Your agent's closing statement for the final answer",
    "recruit": "Your agent would ask",
    "relay": "Your words, which the asker's agent would pass on",
}
MAX_SOURCES = 8  # sources a card names; the rest are counted


@dataclass(frozen=True)
class SourceRef:
    """One memory line the text rests on, as the member reads it: "Erin's message in your DM with Erin, 16 Nov
    11:05". `link` opens it where the platform has a link for it ("" when it has none)."""

    label: str
    link: str = ""


@dataclass(frozen=True)
class ApprovalCard:
    title: str  # one line: "Alice Chen asked something your agent can answer. Share this?"
    question: str  # the ask's question, as the requester wrote it
    asker: str  # the requester's display name
    lead: str  # what the quote is: "Your agent would say", "Your agent would ask", ...
    quote: str  # exactly the text that would leave, without the ids agents cite by
    sources: tuple[SourceRef, ...] = ()
    more_sources: int = 0  # sources not named (beyond MAX_SOURCES)
    audience: tuple[str, ...] = ()  # display names, "everyone in #general", the admins who read the agents' thread
    deadline: datetime | None = None  # aware, in `zone`
    zone: str = "UTC"

    @property
    def asked_by(self) -> str:
        return f"{QUESTION_HEADING} from {self.asker}" if self.asker else QUESTION_HEADING

    @property
    def who_sees(self) -> str:
        return names_list(self.audience) if self.audience else "nobody but you"

    @property
    def answer_by(self) -> str:
        """The deadline in the member's zone, the zone said: "Answer by 12:15 UTC (Sun 29 Nov); no answer means it
        is not shared." """
        if self.deadline is None:
            return ""
        zone = "UTC" if self.zone in ("UTC", "Etc/UTC") else f"{self.zone} time"
        return (
            f"Answer by {self.deadline:%H:%M} {zone} ({self.deadline:%a} {self.deadline.day} {self.deadline:%b}); "
            "no answer means it is not shared."
        )

    @property
    def more_label(self) -> str:
        return f"and {self.more_sources} more" if self.more_sources else ""


def names_list(names: tuple[str, ...] | list[str]) -> str:
    """ "Alice Chen, Carol Diaz and everyone in #general"."""
    names = list(names)
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def plain_text(card: ApprovalCard) -> str:
    """The card as plain lines, no markup: for a surface without layout. The quote is set off by indenting."""
    quote = "\n".join(f"    {line.strip()}" for line in card.quote.splitlines() if line.strip())
    parts = [f"{card.asked_by}: {card.question}", f"{card.lead}:", quote]
    if card.sources:
        shown = [f"  {s.label}" for s in card.sources] + ([f"  ({card.more_label})"] if card.more_sources else [])
        parts += [f"{SOURCES_HEADING}:", *shown]
    parts.append(f"{AUDIENCE_HEADING}: {card.who_sees}")
    if card.answer_by:
        parts.append(card.answer_by)
    return "\n".join(parts)
