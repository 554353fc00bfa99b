"""Every user-facing text of the Discord app that is Discord-specific (the ask flow's own texts live in
`bot.messages`). Functions, so each text names what it needs."""

from __future__ import annotations

from collections.abc import Sequence

from bot import messages
from bot.port import ApprovalDecision, ApprovalKind, ApprovalRequest, SharePolicy


# ---------------------------------------------------------------------- /ask-with
ASK_DESCRIPTION = "Ask your colleagues' agents a question; each knows only what its member can see."
QUESTION_DESCRIPTION = "Your question (you may start it with @mentions of the colleagues to ask)"
COLLEAGUE_DESCRIPTION = "A colleague whose agent should help"


def mention(ref: str) -> str:
    """A colleague typed as `<@id>` renders as their name again; a typed `@name` stays as typed."""
    return f"<@{ref}>" if ref.isdigit() else f"@{ref}"


def asking(colleagues: Sequence[str]) -> str:
    """The note after a request was accepted; `colleagues` are display names."""
    owners = [f"{name}'s" for name in colleagues]
    who = f"{owners[0]} agent" if len(owners) == 1 else ", ".join(owners[:-1]) + f" and {owners[-1]} agents"
    return f"\u23f3 Your agent is asking {who}\u2026 The answer will appear here (only you can see it)."


# ---------------------------------------------------------------------- /negotiate
NEGOTIATE_DESCRIPTION = "Let your agent and a colleague's agent negotiate who does which of your tasks."
NEGOTIATE_COLLEAGUE_DESCRIPTION = "The colleague to negotiate with"


def negotiating(colleague: str) -> str:
    """The note after a request was accepted; `colleague` is a display name."""
    return (
        f"\U0001f91d Your agent is negotiating with {colleague}'s agent\u2026 "
        "You'll both get the agreed trade by DM to accept or decline."
    )


# ---------------------------------------------------------------------- /askwith
SETTINGS_DESCRIPTION = "Your askwith agent's settings"


def settings_summary(opted_in: bool, share: SharePolicy, excluded_channel_ids: Sequence[str]) -> str:
    memory = messages.memory_state(opted_in)
    excluded = ", ".join(f"<#{c}>" for c in excluded_channel_ids) or "none"
    return (
        f"**Your askwith settings**\n"
        f"\u2022 Memory: {memory}\n"
        f"\u2022 Sharing: `{share.value}`: {messages.SHARE_MEANING[share]}\n"
        f"\u2022 Kept out of your agent's memory: {excluded}\n"
        "Change them with `/askwith on|off`, `/askwith share`, `/askwith exclude`, `/askwith include`."
    )


def not_known_yet() -> str:
    return "askwith does not know you yet (it learns the server's members every few minutes). Please try again soon."


def channel_not_known(channel_id: str) -> str:
    return f"askwith holds no memory of <#{channel_id}> (it cannot read it), so there is nothing to exclude."


# ---------------------------------------------------------------------- approvals
def approval_prompt(request: ApprovalRequest) -> str:
    return f"**{request.title}**\n{request.body}"


BUTTONS = {  # (yes, no) button labels per kind of approval
    ApprovalKind.SHARE: ("Approve", "Deny"),
    ApprovalKind.TRADE: ("Accept", "Decline"),
}
VERDICTS = {
    ApprovalKind.SHARE: ("\u2705 You approved this share.", "\u274c You declined."),
    ApprovalKind.TRADE: ("\u2705 You accepted the trade.", "\u274c You declined the trade."),
}
EXPIRED = {
    ApprovalKind.SHARE: "\u231b No answer in time, so nothing was shared.",
    ApprovalKind.TRADE: "\u231b No answer in time, so the trade lapsed.",
}


def approval_decided(request: ApprovalRequest, decision: ApprovalDecision) -> str:
    yes, no = VERDICTS[request.kind]
    return f"{approval_prompt(request)}\n\n{yes if decision is ApprovalDecision.APPROVED else no}"


def approval_expired(request: ApprovalRequest) -> str:
    return f"{approval_prompt(request)}\n\n{EXPIRED[request.kind]}"


def approval_not_pending() -> str:
    return "This request is no longer waiting for you (it was answered, expired, or askwith restarted)."


def approval_not_yours() -> str:
    return "Only the member who was asked can answer this request."


# ---------------------------------------------------------------------- setup and failures
def guild_ambiguous(count: int) -> str:
    if count == 0:
        return "The Discord bot is in no server yet: invite it with the URL in the README, then start askwith."
    return "The Discord bot is in several servers: set DISCORD_GUILD_ID to the one askwith should serve."


def no_guild_started() -> str:
    return "No Discord server could be started (see the log for each one's reason)."


def guild_not_served() -> str:
    return "askwith is not set up in this server yet. Please try again in a minute."


def admin_role_unknown(role: str) -> str:
    return f"DISCORD_ADMIN_ROLE={role!r} names no role of the server."


def refusal(status: int, code: int, detail: str) -> str:
    """Why Discord refused a call: its HTTP status, its JSON error code (0 when none) and its message."""
    return f"HTTP {status}, code {code}: {detail or 'no detail'}"


def command_failed() -> str:
    return "Sorry, something went wrong on our side. Please try again in a minute."
