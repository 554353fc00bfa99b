"""Every user-facing text of the Slack app that is Slack-specific (the ask flow's own texts live in
the `bot.texts` modules). Functions, so each text names what it needs."""

from __future__ import annotations

from collections.abc import Sequence

from bot.platform.port import ApprovalDecision, ApprovalKind, ApprovalRequest, SharePolicy
from bot.store.member_settings import MemberSettings
from bot.texts import chat_texts, settings_texts


# ---------------------------------------------------------------------- /ask-with
ASK_HELP = (
    "*/ask-with @colleague [@colleague …] <question>*\n"
    "Your askwith agent asks your colleagues' agents, each of which knows only what its member can see, "
    "and sends you the answer in a DM with a link to the whole conversation.\n"
    "• `/ask-with @bob when is the launch review?`\n"
    "• `/ask-with @bob @carol what time works for everyone on Thursday?`\n"
    "Your own settings (sharing, excluded channels): `/askwith help`."
)


def mention(member_id: str) -> str:
    return f"<@{member_id}>"


def asking(colleagues: Sequence[str]) -> str:
    """The immediate ephemeral ack; `colleagues` are display names or `<@U…>` mentions."""
    return chat_texts.asking(colleagues, mark=":hourglass_flowing_sand:", then="I'll DM you the answer.")


# ---------------------------------------------------------------------- /negotiate
NEGOTIATE_HELP = (
    "*/negotiate @colleague*\n"
    "Your askwith agent and your colleague's agent negotiate who does which of your tasks, each knowing only its "
    "own member's values. You both get the agreed trade with Accept / Decline; nothing changes unless both accept.\n"
    "• `/negotiate @bob`\n"
    "Your tasks and what they are worth to you come from your negotiation profile (an admin loads it)."
)


def negotiating(colleague: str) -> str:
    """The immediate ephemeral ack; `colleague` is a display name or a `<@U…>` mention."""
    return chat_texts.negotiating(colleague, mark=":handshake:")


def negotiate_usage_error(what: str) -> str:
    return f"I didn't understand `{what}`.\n{NEGOTIATE_HELP}"


# ---------------------------------------------------------------------- /askwith (member settings)
SETTINGS_HELP = (
    "*/askwith* — your askwith agent's settings\n"
    "• `/askwith` — show your settings\n"
    "• `/askwith on` / `/askwith off` — let askwith remember your conversations (opt in) or stop (opt out)\n"
    "• `/askwith share auto|ask|never` — share what your agent finds freely, only after you approve, or never\n"
    "• `/askwith exclude #channel` / `/askwith include #channel` — keep a channel out of your agent's memory\n"
    "• `/askwith timezone Europe/Paris` — read deadlines in that zone (`auto`: your Slack profile's; alone: show it)\n"
    "• `/askwith connect` — let your agent read your DMs (a one-time Slack authorisation)\n"
    "• `/askwith disconnect` — revoke that authorisation and forget your token\n"
    "• `/askwith forget` — disconnect, turn memory off and delete your memory: what only you could see, your asks"
)


def settings_summary(opted_in: bool, share: SharePolicy, excluded_channel_ids: Sequence[str]) -> str:
    memory = settings_texts.memory_state(opted_in)
    excluded = ", ".join(f"<#{c}>" for c in excluded_channel_ids) or "none"
    return (
        f"*Your askwith settings*\n• memory: {memory}\n"
        f"• sharing: `{share.value}` ({settings_texts.SHARE_MEANING[share]})\n"
        f"• excluded channels: {excluded}"
    )


def time_zone_reply(current: MemberSettings, workspace_zone: str, *, changed: bool) -> str:
    state = settings_texts.time_zone_state(current.time_zone, current.platform_time_zone, workspace_zone)
    return f"{'Saved. ' if changed else ''}*Your time zone* for deadlines and times: {state}"


def settings_usage_error(what: str) -> str:
    return f"I didn't understand `{what}`.\n{SETTINGS_HELP}"


def settings_not_synced() -> str:
    return "askwith hasn't met you yet (the member list syncs every few minutes). Please try again shortly."


def unknown_channel_setting(channel: str) -> str:
    return f"askwith doesn't know the channel {channel} (it only knows channels it was invited to)."


def connect_link(url: str) -> str:
    return f"<{url}|Connect your DMs to askwith> — Slack will ask you to allow read access to your DMs."


def connect_unavailable() -> str:
    return "DM access isn't set up on this askwith install (the admin needs to set SLACK_CLIENT_ID)."


# ---------------------------------------------------------------------- approvals
VERDICTS = {
    ApprovalKind.SHARE: {
        ApprovalDecision.APPROVED: ":white_check_mark: You approved",
        ApprovalDecision.APPROVED_ALL: ":white_check_mark: You approved everything your agent says in this ask",
        ApprovalDecision.DENIED: ":no_entry_sign: You denied",
        ApprovalDecision.TIMEOUT: ":hourglass: Nobody answered in time, so your agent did not share",
    },
    ApprovalKind.TRADE: {
        ApprovalDecision.APPROVED: ":white_check_mark: You accepted",
        ApprovalDecision.DENIED: ":no_entry_sign: You declined",
        ApprovalDecision.TIMEOUT: ":hourglass: Nobody answered in time, so the trade lapsed",
    },
}


def approval_outcome(request: ApprovalRequest, decision: ApprovalDecision) -> str:
    """The prompt, replaced once answered: the verdict, what it means, and the question it was about (no ids)."""
    verdict = VERDICTS[request.kind].get(decision, VERDICTS[request.kind][ApprovalDecision.DENIED])
    if request.kind is not ApprovalKind.SHARE:
        return f"{verdict}: {request.title}"
    meaning = chat_texts.approval_meaning(request, decision)
    question = request.context.get("question", "")
    return f"{verdict}. {meaning}" + (f"\n_Question: {question}_" if question else "")


def approval_recorded(decision: ApprovalDecision) -> str:
    """A click on a prompt another askwith process posted: the decision is stored, the ask picks it up."""
    return chat_texts.approval_recorded(VERDICTS[ApprovalKind.SHARE][decision])


def approval_not_pending() -> str:
    return "This request is no longer waiting for an answer (it was already answered or it expired)."


def approval_not_yours() -> str:
    return "Only the person this request was sent to can answer it."


# ---------------------------------------------------------------------- install flow (browser pages)
def install_done(member_id: str) -> str:
    return f"Done: askwith can now read your DMs for your agent ({member_id}). You can close this tab."


def install_failed(reason: str) -> str:
    return f"askwith could not connect your DMs: {reason}. Please start again from `/askwith connect`."


# ---------------------------------------------------------------------- memory and tokens
def memory_turned_off(summary: str) -> str:
    return f"{summary}\n{settings_texts.memory_off_effect().replace('forget it', 'run `/askwith forget`')}"


def disconnected(had_token: bool) -> str:
    return settings_texts.disconnected(had_token).replace("forget it", "run `/askwith forget`")


LIVE_SEARCH_REFUSED = {
    "expired": "Slack's permission for your agent to search as you has expired (it lasts only a short while after "
    "your message)",
    "scope": "your agent is missing a Slack search permission ({needed})",
    "revoked": "Slack no longer accepts askwith's access to your search",
    "unavailable": "Slack does not offer its search to askwith in this workspace right now, so your agent answers "
    "without searching Slack",
}
LIVE_SEARCH_NEXT = {
    "expired": "Mention me again (`@askwith …`) or write to me here to ask again, or run `/askwith connect` to let "
    "your agent search with your own permission.",
    "unavailable": "A workspace admin can check that askwith is approved for Slack's search; nothing else is needed "
    "from you.",
}


GUEST_REFUSED = (
    "askwith answers from Slack's search, and Slack does not let workspace guests use apps built on it: ask a full "
    "member of the workspace to ask for you."
)


def live_search_refused(kind: str, needed: str = "") -> str:
    """Told by DM when Slack refuses a search of a member's agent (the ask goes on without those results)."""
    reason = LIVE_SEARCH_REFUSED[kind].format(needed=needed or "search:read")
    then = LIVE_SEARCH_NEXT.get(kind, "Run `/askwith connect` to let your agent search.")
    return f"askwith could not search Slack for you: {reason}. {then}"


def token_disabled(reason: str) -> str:
    return settings_texts.token_disabled(reason) + " Run `/askwith connect` to connect again."


# ---------------------------------------------------------------------- asking where you are (mention, DM, thread)
MENTION_HELP = (
    "Mention me with your colleagues and a question: `@askwith ask @bob @carol when is the launch review?` "
    "(the word *ask* is optional). I answer in this thread; reply here mentioning me to follow up with the same "
    "colleagues. In a DM with me, just write `@bob when is the launch review?`."
)


def status_starting() -> str:
    return ":hourglass_flowing_sand: Your agent is starting…"


def status_line(stage_text: str, *, final: bool) -> str:
    return f"{':white_check_mark:' if final else ':hourglass_flowing_sand:'} {stage_text}"


def answer_heading(asker_id: str, question: str = "") -> str:
    """`question`: escaped mrkdwn; said with the answer so a DM full of answers reads on its own."""
    return f"<@{asker_id}> asked: {question}".rstrip()


def contributors_line(names: Sequence[str]) -> str:
    """`names`: each colleague whose agent shared lines of its own member's memory (`contributor`)."""
    return "Contributed: " + "; ".join(names) if names else "No colleague's agent shared anything of its own."


def contributor(name: str, sources: int, links: Sequence[str]) -> str:
    cited = chat_texts.sources_cited(sources)
    return f"{name}'s agent ({cited}{': ' + ', '.join(links) if links else ''})"


def source_link(link: str, sender: str | None, when: str | None) -> str:
    said = " · ".join(part for part in (sender, when) if part)
    return f"{link} {said}".strip()


def source_quote(quote: str, via_name: str) -> str:
    return f"> {quote}\n— {chat_texts.shared_by(via_name)}"


def disagreement(text: str) -> str:
    return f":warning: The agents disagreed: {text}"


def tried(text: str) -> str:
    return f"Tried: {text}"


def quotes_for_you(ask_question: str) -> str:
    return f"What colleagues' agents quoted for you in your ask “{ask_question}”:"


def answer_fallback(answer: str, transcript_ref: str) -> str:
    """The notification text of a rich answer (Slack shows it where blocks are not rendered)."""
    return f"{answer[:2800]}\n{transcript_ref}"


def cancel_refused(reason: str) -> str:
    return f":no_entry: {reason}"


def cancel_requested() -> str:
    return "Cancelling… the agents stop at their next step."


# ---------------------------------------------------------------------- "Ask about this thread" (message shortcut)
THREAD_ASK_SUBMIT = "Ask"
THREAD_ASK_COLLEAGUES = "Whose agents should your agent ask?"
THREAD_ASK_QUESTION = "Your question about this thread"


def thread_not_yours() -> str:
    return "You can only ask about a thread in a conversation you are in."


def thread_not_readable() -> str:
    return "I can't read that thread: invite me to the conversation first (`/invite @askwith`)."


# ---------------------------------------------------------------------- App Home
HOME_SETTINGS = chat_texts.SETTINGS_TITLE
HOME_NO_ASKS = "You have not asked anything yet. Mention me in a channel or DM me: `@bob when is the launch?`"
HOME_NOTHING_SHARED = "Your agent has not shared anything with anyone yet."
HOME_TURN_ON = "Turn memory on"
HOME_TURN_OFF = "Turn memory off"
HOME_EXCLUDED = "*Channels your agent never uses*"
HOME_CONNECTED = "*Your DMs:* your agent may read them (only for your own asks and what you let it share)."
HOME_NOT_CONNECTED = "*Your DMs:* not connected; your agent knows only the channels askwith is in."
HOME_DISCONNECT = "Disconnect my DMs"
HOME_CONNECT = "Connect my DMs"


def home_memory(state: str) -> str:
    return f"*Memory:* {state}"


def home_share(meaning: str) -> str:
    return f"*Sharing:* {meaning}"


def share_label(policy: SharePolicy) -> str:
    return {"auto": "Share automatically", "ask": "Ask me first", "never": "Never share"}[policy.value]


def home_ask_line(ask_id: int, question: str, status: str, transcript: str | None) -> str:
    return f"*#{ask_id}* {question} — _{status}_" + (f" · {transcript}" if transcript else "")


def home_shared_line(requester: str, text: str, when: str, approval: str) -> str:
    how = "you approved it" if approval == "approved" else "shared automatically"
    return f"{when} · to {requester}'s agent ({how}):\n> {text[:500]}"


# ---------------------------------------------------------------------- Assistant side panel
ASSISTANT_PROMPTS_TITLE = "Ask your colleagues' agents"
ASSISTANT_PROMPTS = [
    {"title": "When is the launch?", "message": "@colleague when is the launch date?"},
    {"title": "Who decided?", "message": "@colleague who decided on the new plan, and why?"},
    {"title": "How do I use askwith?", "message": "help"},
]


# ---------------------------------------------------------------------- user groups
GROUP_CANCEL_BUTTON = "Don't ask"


def group_confirm(count: int) -> str:
    return f"That is {count} colleagues' agents. Ask them all?"


def group_not_asked() -> str:
    return "OK, nobody was asked."
