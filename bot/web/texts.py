"""Every user-facing text of the web app, in one place."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.platform.port import SharePolicy
from bot.texts import settings_texts


SIGN_IN_TITLE = "Sign in with a link"
SIGN_IN = "Open the transcript link askwith posted to you in Slack or Discord to sign in."
LINK_REFUSED_TITLE = "Link refused"
FORBIDDEN_TITLE = "Not yours to open"
FORBIDDEN = "Only the members who took part in this conversation (and admins) can open its transcript."
NOT_FOUND_TITLE = "Not found"
NO_SUCH_PAGE = "There is no page at this address. It may have moved, or the link may be mistyped."
ADMINS_ONLY = "Only workspace admins can open this page."
NO_LOCAL_WORKSPACE = "This server hosts no local workspace: members use askwith from Slack or Discord."
# Said alike of a conversation that does not exist and of one the member is not in (never "you are not a member").
NO_SUCH_CONVERSATION = "There is no conversation at this address. It may have moved, or the link may be mistyped."
CSRF_REFUSED = "Refused: this form was not sent from askwith's own page. Reload the page and try again."
METRICS_REFUSED = "Metrics need ASKWITH_METRICS_TOKEN as a bearer token, or an admin signed in."
# The first screen's example, per sample workspace: (colleague, question) pairs whose answers its memory holds.
SAMPLE_ASKS = {
    "acme": [
        ("carol", "Which room is booked for the rehearsal?"),
        ("dave", "What is the budget for the launch party?"),
    ],
}
GENERIC_QUESTION = "what should I know about this week?"
ASK_USAGE = "Usage: /ask-with @colleague [@colleague …] <question>"


SETTINGS_USAGE = (
    "Your own settings: /askwith show · /askwith on|off (memory) · /askwith share auto|ask|never · "
    "/askwith exclude #channel · /askwith include #channel · /askwith timezone Europe/Paris|auto. "
    "The Settings page has the others."
)
KEPT_IN_BOX = "Your text is still in the message box."


def unknown_command(word: str, suggestion: str) -> str:
    return f"{word} is not a command, so nothing was posted. Did you mean:\n{suggestion}"


def not_a_setting(typed: str, suggestion: str | None) -> str:
    """`/askwith shre ask`: what was not understood, and the fix when one is close."""
    if suggestion is None:
        return f"{typed} is not a setting askwith knows, so nothing changed.\n{SETTINGS_USAGE}"
    return f"{typed} is not a setting askwith knows, so nothing was posted or changed. Did you mean:\n{suggestion}"


def settings_summary(memory: str, share: str, excluded: list[str]) -> str:
    kept_out = ", ".join(excluded) if excluded else "none"
    return f"Memory: {memory}. Sharing: {share}. Channels kept out of memory: {kept_out}."


def time_zone_summary(state: str) -> str:
    return f"Deadlines and times you are sent are in {state}."


def no_such_channel(name: str) -> str:
    return f"You are in no channel {name or '(none given)'}; write it as it is in the sidebar, e.g. #general."


def no_bench_reports(root: str) -> str:
    return (
        f"No bench reports yet in {root} (ASKWITH_BENCH_REPORTS_DIR). Reports and their plots appear here once "
        "`askwith bench report` has written one there."
    )


def not_found(what: str) -> str:
    return f"There is no {what}."


ASK_PAGE = "the ask's page"  # the words of a note that link to the ask's page (`bot.web.render.message_html`)


def ask_page_ref(ask_id: int) -> str:
    """Where a note points the member: rendered as a link named `ASK_PAGE`."""
    return f"{ASK_PAGE} (/workspace/asks/{ask_id})"


def asking(colleagues: list[str], ask_id: int) -> str:
    handles = [f"@{c.lstrip('@')}" for c in colleagues]
    names = handles[0] if len(handles) == 1 else f"{', '.join(handles[:-1])} and {handles[-1]}"
    agents = "agent" if len(handles) == 1 else "agents"
    return (
        f"Your agent is asking {names}'s {agents}. Follow it on {ask_page_ref(ask_id)}; "
        "the answer also arrives in your DM with askwith."
    )


def waiting_for(name: str, deadline: datetime) -> str:
    """Whose agent the ask waits for and until when: never why (that its member is asked to approve something would
    tell what their memory holds)."""
    return f"Waiting for {name}'s agent, until {short_time(deadline)} at the latest."


def short_time(ts: datetime, *, now: datetime | None = None) -> str:
    """A time as a member reads it, its zone said: "16 Nov 11:05 UTC" ("16 Nov 2025 11:05 UTC" in another year).
    Pages print it in UTC; the browser rewrites it in the member's own zone (base.html)."""
    utc = ts.astimezone(UTC) if ts.tzinfo else ts.replace(tzinfo=UTC)  # stored times without a zone are UTC
    year = "" if utc.year == (now or datetime.now(UTC)).year else f" {utc.year}"
    return f"{utc.day} {utc:%b}{year} {utc:%H:%M} UTC"


def approval_decided(decision: str) -> str:
    return f"You {decision} sharing it."


NOT_YOUR_ASK = "Only the member who asked (and admins) can follow this ask here; colleagues can open its transcript."
ASKERS_CONTROLS = "Only the member who asked can vote on this answer, follow it up or cancel it."
CANCEL_STOPPING = "Cancel requested: the worker running this ask stops at its next heartbeat."
BAD_REQUEST_TITLE = "Not understood"
BAD_SETTING = "That setting was not understood. Reload the settings page and try again."
SETTINGS_SAVED = {
    "memory": "Saved: memory setting.",
    "share": "Saved: sharing setting.",
    "exclusions": "Saved: channels kept out of your agent's memory.",
}


def memory_state(opted_in: bool) -> str:
    return settings_texts.memory_state(opted_in)


def share_meaning(policy: SharePolicy) -> str:
    return settings_texts.SHARE_MEANING[policy]
