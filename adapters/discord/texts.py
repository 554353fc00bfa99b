"""Every user-facing text of the Discord app that is Discord-specific (the ask flow's own texts live in
the `bot.texts` modules). Functions, so each text names what it needs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import discord

from bot.platform.port import ApprovalDecision, ApprovalKind, ApprovalRequest, SharePolicy
from bot.store.member_settings import MemberSettings
from bot.texts import chat_texts, settings_texts


# ---------------------------------------------------------------------- /ask-with
ASK_DESCRIPTION = "Ask your colleagues' agents a question; each knows only what its member can see."
QUESTION_DESCRIPTION = "Your question (you may start it with @mentions of the colleagues to ask)"
COLLEAGUE_DESCRIPTION = "A colleague whose agent should help"


def mention(ref: str) -> str:
    """A colleague typed as `<@id>` renders as their name again; a typed `@name` stays as typed."""
    return f"<@{ref}>" if ref.isdigit() else f"@{ref}"


def by_name(refusal: str, people: Sequence[discord.abc.User]) -> str:
    """A core refusal quotes a person as it was handed them (a Discord id, `'1234…'`): the member reads the name
    they picked instead."""
    for user in people:
        refusal = refusal.replace(repr(str(user.id)), repr(user.name))
    return refusal


def asking(colleagues: Sequence[str]) -> str:
    """The note after a request was accepted; `colleagues` are display names."""
    return chat_texts.asking(colleagues, mark="\u23f3", then="The answer will appear here (only you can see it).")


# ---------------------------------------------------------------------- asking in chat (mention, DM, thread)
ASK_ABOUT_THREAD = chat_texts.ASK_ABOUT_THREAD
MODAL_COLLEAGUES = "Colleagues"
MODAL_COLLEAGUES_HINT = "Whose agents should help (up to 10)"
MODAL_QUESTION = "Your question"
MODAL_QUESTION_PLACEHOLDER = "e.g. What did we decide about the launch date?"


def ask_usage(bot_mention: str) -> str:
    return (
        f"Ask me with your colleagues' agents: `{bot_mention} ask @bob @carol when is the launch?` "
        "(a role works too: every member of it is asked)."
    )


def status_queued(asker_mention: str) -> str:
    return f"⏳ {asker_mention}, your agent is on it."


def status_line(asker_mention: str, stage_text: str) -> str:
    return f"⏳ {asker_mention}: {stage_text}"


def cancelling() -> str:
    return "⏹ Cancelling…"


def status_finished(asker_mention: str, stage_text: str) -> str:
    return f"{asker_mention}: {stage_text} The answer is in its own message."


def group_confirm(count: int, groups: Sequence[str]) -> str:
    return f"{', '.join('@' + g for g in groups)} would ask {count} people's agents. Ask them all?"


def group_empty(group: str) -> str:
    return f"Nobody in @{group} can be asked (the role has no other members)."


def group_declined() -> str:
    return "Not asked."


def group_not_yours() -> str:
    return "Only the member who asked can confirm this."


def posted_by_dm(channel_id: str) -> str:
    return f"I may not post in <#{channel_id}>, so here is your ask's progress and answer, by DM."


# ---------------------------------------------------------------------- the answer (embeds)
CONTRIBUTED = "Who contributed"
DISAGREED = "The agents disagreed"
TRIED = "What the agents tried"
SOURCE = "a message"
LEFT_OUT = "More"
ANSWER_TITLES = {
    "done": "Answer",
    "unsupported": "Unsupported: no message the agents could share supports this, so treat it as a guess",
    "failed": "Could not answer",
    "cancelled": "Cancelled",
}


def asked(question: str) -> str:
    return f"Asked: {question}"


def answer_title(status: str) -> str:
    return ANSWER_TITLES.get(status, "Answer")


def answer_footer(ask_id: int) -> str:
    return f"ask #{ask_id} \u00b7 askwith transcripts show {ask_id}"


def answer_heading(asker_mention: str, transcript_ref: str) -> str:
    """The answer message's text above its embed: whom it answers, and the ask's transcript reference."""
    return f"{asker_mention}\n-# {transcript_ref}"


QUOTES_SENT_BY_DM = f"-# {chat_texts.QUOTES_SENT_BY_DM}"


def answer_cancelled(by: str) -> str:
    return f"Cancelled by {by}; the agents stopped."


def contributor_line(name: str, sources: int, brought_in: bool) -> str:
    joined = " (brought in)" if brought_in else ""
    cited = chat_texts.sources_cited(sources) if sources else "nothing from their own memory"
    return f"\u2022 {name}'s agent{joined}: {cited}"


def left_out(count: int) -> str:
    return f"{count} more part(s) of this answer are in the transcript (Discord shows only so much)."


# ---------------------------------------------------------------------- /negotiate
NEGOTIATE_DESCRIPTION = "Let your agent and a colleague's agent negotiate who does which of your tasks."
NEGOTIATE_COLLEAGUE_DESCRIPTION = "The colleague to negotiate with"


def negotiating(colleague: str) -> str:
    """The note after a request was accepted; `colleague` is a display name."""
    return chat_texts.negotiating(colleague, mark="\U0001f91d")


# ---------------------------------------------------------------------- /askwith
SETTINGS_DESCRIPTION = "Your askwith agent's settings"


def settings_summary(opted_in: bool, share: SharePolicy, excluded_channel_ids: Sequence[str]) -> str:
    return (
        f"**{chat_texts.SETTINGS_TITLE}**\n{settings_lines(opted_in, share, excluded_channel_ids)}\n"
        "Change them with `/askwith on|off`, `/askwith share`, `/askwith exclude`, `/askwith include`; "
        "`/askwith forget` deletes your memory."
    )


def time_zone_reply(current: MemberSettings, workspace_zone: str, *, changed: bool) -> str:
    state = settings_texts.time_zone_state(current.time_zone, current.platform_time_zone, workspace_zone)
    return f"{'Saved. ' if changed else ''}**Your time zone** for deadlines and times: {state}"


PANEL_NO_ASKS = "None yet. Mention me with colleagues and a question, or DM me."
PANEL_NOTHING_SHARED = "Nothing yet."
PANEL_DMS = "DMs: Discord lets no bot read your DMs, so askwith never remembers them; there is nothing to connect."
PANEL_SHARE_PLACEHOLDER = "Sharing"
PANEL_EXCLUDE_PLACEHOLDER = "Channels kept out of your agent's memory"
SHARE_LABELS = {
    SharePolicy.AUTO: "Share: auto (share what it finds)",
    SharePolicy.ASK: "Share: ask me first, by DM",
    SharePolicy.NEVER: "Share: never (decline to take part)",
}
ASK_STATUS_MARKS = {"done": "\u2705", "unsupported": "\u26a0\ufe0f", "failed": "\u274c", "cancelled": "\u23f9"}


def panel_settings(settings: MemberSettings) -> str:
    return settings_lines(settings.opted_in, settings.share, settings.excluded_channels)


def settings_lines(opted_in: bool, share: SharePolicy, excluded_channel_ids: Sequence[str]) -> str:
    excluded = ", ".join(f"<#{c}>" for c in excluded_channel_ids) or "none"
    return (
        f"\u2022 Memory: {settings_texts.memory_state(opted_in)}\n"
        f"\u2022 Sharing: `{share.value}`: {settings_texts.SHARE_MEANING[share]}\n"
        f"\u2022 Kept out of your agent's memory: {excluded}"
    )


def panel_memory_button(opted_in: bool) -> str:
    return "Memory: on (turn off)" if opted_in else "Memory: off (turn on)"


def panel_memory_off() -> str:
    return settings_texts.memory_off_effect()


def share_label(policy: SharePolicy) -> str:
    return SHARE_LABELS[policy]


def panel_ask(ask_id: int, question: str, status: str, link: str | None) -> str:
    mark = ASK_STATUS_MARKS.get(status, "\u23f3")
    shown = discord_escape(question if len(question) <= 80 else question[:79] + "\u2026")
    ref = f"[#{ask_id}]({link})" if link else f"#{ask_id} (`askwith transcripts show {ask_id}`)"
    return f"{mark} {ref} {shown}"


def panel_shared(requester: str, with_agent: str, question: str, text: str, at: datetime, approval: str) -> str:
    said = discord_escape(text if len(text) <= 300 else text[:299] + "\u2026")
    asked = discord_escape(question if len(question) <= 80 else question[:79] + "\u2026")
    how = "you approved" if approval == "approved" else "shared automatically"
    people = [p.strip() for p in with_agent.split(",") if p.strip()]  # one agent, or the audience it went to
    if len(people) > 1:
        whom = ", ".join(people[:-1]) + f" and {people[-1]}"
    else:
        whom = f"{with_agent}'s agent" + (f" (for {requester})" if requester != with_agent else "")
    return f"\u2022 {discord.utils.format_dt(at, 'R')} to {whom}, {how}, on \u201c{asked}\u201d: {said}"


def discord_escape(text: str) -> str:
    return discord.utils.escape_mentions(discord.utils.escape_markdown(" ".join(text.split())))


def not_known_yet() -> str:
    return "askwith does not know you yet (it learns the server's members every few minutes). Please try again soon."


def channel_not_known(channel_id: str) -> str:
    return f"askwith holds no memory of <#{channel_id}> (it cannot read it), so there is nothing to exclude."


# ---------------------------------------------------------------------- approvals
def approval_prompt(request: ApprovalRequest) -> str:
    """The prompt's message text: a share's card is its embed (`approval_embed.card_embed`), a trade's is its body."""
    if request.card is not None:
        return f"**{discord_escape(request.title)}**"
    return f"**{request.title}**\n{request.body}"


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
    approved = decision in (ApprovalDecision.APPROVED, ApprovalDecision.APPROVED_ALL)
    verdict = yes if approved else no
    if request.kind is ApprovalKind.SHARE:  # what the answer means, said once
        verdict = f"{verdict} {chat_texts.approval_meaning(request, decision)}"
    return f"{approval_prompt(request)}\n\n{verdict}"


def approval_expired(request: ApprovalRequest) -> str:
    return f"{approval_prompt(request)}\n\n{EXPIRED[request.kind]}"


def approval_recorded(decision: ApprovalDecision) -> str:
    """A click on a prompt another askwith process posted: the decision is stored, the ask picks it up."""
    approved = decision in (ApprovalDecision.APPROVED, ApprovalDecision.APPROVED_ALL)
    return chat_texts.approval_recorded("You approved" if approved else "You denied")


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
