"""The texts every chat platform shows around an ask, said once. A platform passes in only what is its own (an
emoji's spelling, a mention's syntax, a formatting mark); where two platforms word a text differently on purpose,
each keeps its own wording in its adapter's `texts` module.

    asking(["<@U1>"], mark=":hourglass_flowing_sand:", then="I'll DM you the answer.")
    # ":hourglass_flowing_sand: Your agent is asking <@U1>'s agent… I'll DM you the answer."
    approval_recorded("You approved")
    # "You approved this request; your agent goes on accordingly."
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.platform.port import ApprovalDecision, ApprovalKind, ApprovalRequest
from bot.texts import approval_texts


# ---------------------------------------------------------------------- buttons and titles
CANCEL_BUTTON = "Cancel"
TRANSCRIPT_BUTTON = "Transcript"
VOTE_UP_BUTTON = "👍"
VOTE_DOWN_BUTTON = "👎"
GROUP_CONFIRM_BUTTON = "Ask them all"
APPROVAL_BUTTONS = {  # (yes, no) button labels per kind of approval
    ApprovalKind.SHARE: ("Approve", "Deny"),
    ApprovalKind.TRADE: ("Accept", "Decline"),
}
ASK_ABOUT_THREAD = "Ask about this thread"
SETTINGS_TITLE = "Your askwith settings"
RECENT_ASKS_TITLE = "Your recent asks"
SHARED_TITLE = "What your agent shared, with whom"
QUOTES_SENT_BY_DM = "The lines colleagues' agents quoted for you were sent to you by DM, not posted here."


# ---------------------------------------------------------------------- acknowledgements
def whose_agents(colleagues: Sequence[str]) -> str:
    """`["bob"]` -> "bob's agent"; `["bob", "carol", "dan"]` -> "bob's, carol's and dan's agents"."""
    owners = [f"{name}'s" for name in colleagues]
    if len(owners) == 1:
        return f"{owners[0]} agent"
    return ", ".join(owners[:-1]) + f" and {owners[-1]} agents"


def asking(colleagues: Sequence[str], *, mark: str, then: str) -> str:
    """The note once an ask is accepted: `mark` is the platform's hourglass, `then` where the answer will be."""
    return f"{mark} Your agent is asking {whose_agents(colleagues)}\u2026 {then}"


def negotiating(colleague: str, *, mark: str) -> str:
    """The note once a negotiation is accepted: `mark` is the platform's handshake."""
    return (
        f"{mark} Your agent is negotiating with {colleague}'s agent\u2026 "
        "You'll both get the agreed trade by DM to accept or decline."
    )


# ---------------------------------------------------------------------- approvals
def approval_meaning(request: ApprovalRequest, decision: ApprovalDecision) -> str:
    """What a member's answer to a share prompt means, naming whom the share reaches."""
    audience = request.card.who_sees if request.card is not None else request.context.get("audience")
    return approval_texts.approval_confirmed(decision.value, audience or "the people it named")


def approval_recorded(verdict: str) -> str:
    """A click on a prompt another askwith process posted: the decision is stored, the ask picks it up."""
    return f"{verdict} this request; your agent goes on accordingly."


# ---------------------------------------------------------------------- the answer
def sources_cited(count: int) -> str:
    return f"{count} source{'s' if count != 1 else ''}"


def shared_by(name: str) -> str:
    return f"shared by {name}'s agent"
