"""Every user-facing text of the ask flow, in one place, as functions (bolt's `logger/messages.py` style).

Adapters render these strings as they are; the model never sees them (its text lives in `prompts/`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bot.platform.port import SharePolicy


# ---------------------------------------------------------------------- rejected requests
def share_withheld(name: str, how: str) -> str:
    """A colleague asked to approve a share said no (`how` = "denied") or did not answer in time ("timeout")."""
    if how == "timeout":
        return f"{name} did not answer the request to share in time, so their agent shared nothing there."
    return f"{name} chose not to share that, so their agent kept it back."


def question_too_long(length: int, limit: int) -> str:
    return (
        f"That question is {length:,} characters long; askwith takes up to {limit:,}. "
        "Shorten it to what you want to know: your agent and your colleagues' agents search memory for the details."
    )


def empty_question() -> str:
    return "Please write a question after the colleagues, e.g. `/ask-with @bob when is the launch?`"


def no_colleague() -> str:
    return "Please name at least one colleague to ask with, e.g. `/ask-with @bob when is the launch?`"


def unknown_member(name: str) -> str:
    return f"I don't know anyone called {name!r} in this workspace."


def deactivated_member(name: str) -> str:
    return f"{name} is no longer active in this workspace, so their agent cannot take part."


def opted_out(name: str) -> str:
    return f"{name} has not turned on their askwith agent, so it cannot take part."


def not_connected(name: str, *, requester: bool) -> str:
    """A live-memory workspace: askwith searches a member's memory only with their permission at that moment."""
    if requester:
        return (
            "askwith cannot search Slack for you yet: ask from a message to askwith (a mention, a DM or the "
            "assistant panel), or connect your account once with `/askwith connect`."
        )
    return f"{name} has not connected askwith to their Slack search yet, so their agent cannot take part."


def bot_member(name: str) -> str:
    return f"{name} is a bot, not a colleague; please ask with a person."


def only_yourself() -> str:
    return "You asked only yourself: please name at least one other colleague."


def requester_inactive(name: str) -> str:
    return f"Your askwith agent is not turned on ({name}); enable it before asking."


def unknown_ablation(name: str, known: Iterable[str]) -> str:
    return f"Unknown ablation {name!r}; choose from: {', '.join(known)}."


# ---------------------------------------------------------------------- inside the agents' conversation
def agent_declines(owner: str) -> str:
    return f"{owner} does not share through askwith, so I can't help with this one. Sorry!"


def agent_closes(*, complete: bool) -> str:
    """A turn that ends the talk without an act call (nobody would hear more)."""
    return "I have what the question needs." if complete else "I have nothing left to try."


def agent_withholds(owner: str, *, for_others: bool = False) -> str:
    """A held turn, in the agent's words. Held for the words of others it carries (a relay): it names no one, and
    says nothing of what was held."""
    if for_others:
        return "What I would pass on carries words that are not mine to share unasked, so I have to keep it to myself."
    return f"{owner} did not approve sharing what I found, so I have to keep it to myself."


def approval_title(owner_requester: str, *, kind: str = "turn") -> str:
    """The prompt's title; a relay (your words, passed on by another agent) says so, since the member's own agent
    is not the one speaking."""
    if kind == "relay":
        return f"Your words would be passed on in {owner_requester}'s ask. Share them?"
    return f"{owner_requester} asked something your agent can answer. Share this?"


# A message id an agent cites by, alone or in a list: "[m0000006]", "[alice:m0000006, m0000005]", "[1700.0001]".
_ID = r"[^\]\s,;]*\d[^\]\s,;]*"
_CITATION = re.compile(rf"\s*\[{_ID}(?:\s*[,;]\s*{_ID})*\]")


def approval_note_source() -> str:
    """A source of an approval card that is a note the member's agent made, not a message."""
    return "A note your agent made from your messages"


def without_ids(text: str) -> str:
    """Text an agent wrote, without the message ids it cites by (for agents, not for people)."""
    return re.sub(r"(?<!\.)\.\.(?!\.)", ".", _CITATION.sub("", text)).replace(" ;", ";")


def said_to_others() -> str:
    """A transcript line a viewer was not in the audience of."""
    return "(said to others in this ask: not shared with you)"


def text_in_platform() -> str:
    """A live ask's record (it read Slack live and keeps no text): where its text and answer are instead."""
    return (
        "This ask read Slack live; its text stays in Slack only. The answer is where askwith posted it; this record "
        "keeps who took part, what happened and when."
    )


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


def hidden_thread_title(ask_id: int, requester: str, colleagues: Iterable[str], question: str) -> str:
    return f"ask #{ask_id}: {requester} with {', '.join(colleagues)}: {question}"


def hidden_turn(agent_owner: str, utterance: str, depth: int) -> str:
    indent = "↳ " * depth
    return f"{indent}{agent_owner}'s agent: {utterance}"


def share_notice(requester: str, question: str, shared: Iterable[str]) -> str:
    """What a colleague reads after their agent shared: `requester` by display name, each text as it left but without
    the ids agents cite by, set off as a quote."""
    texts = [t for t in (" ".join(without_ids(s).split()) for s in shared) if t]
    lines = "\n".join(f"> {text}" for text in texts)
    return f"Your askwith agent answered {requester}'s question \u201c{question}\u201d and shared:\n{lines}"


# ---------------------------------------------------------------------- results
def transcript_ref(ask_id: int) -> str:
    return f"(transcript: `askwith transcripts show {ask_id}`)"


def transcript_link(link: str | None) -> str:
    return f"\nOpen the transcript: {link}" if link else ""


def final_cited_answer(
    ask_id: int,
    answer: str,
    claims: Iterable[tuple[str, list[str]]],
    disagreements: Iterable[str],
    *,
    link: str | None = None,
) -> str:
    """The answer, each claim with the messages it rests on, and where the agents disagreed."""
    lines = [answer]
    shown = [(text, refs) for text, refs in claims if refs]
    if shown:
        lines.append("Based on:")
        lines.extend(f"• {text}\n" + "\n".join(f"    {ref}" for ref in refs) for text, refs in shown)
    if disagreements := list(disagreements):
        lines.append("The agents disagreed:")
        lines.extend(f"• {d}" for d in disagreements)
    return "\n".join(lines) + f"\n{transcript_ref(ask_id)}{transcript_link(link)}"


def final_unsupported(
    ask_id: int, answer: str, tried: Iterable[str], disagreements: Iterable[str], *, link: str | None = None
) -> str:
    """An answer no message supports: said as such, with what the agents tried."""
    tried = tried_in_public(tried)
    lines = [f"Unsupported: no message the agents could share supports this answer, so treat it as a guess:\n{answer}"]
    if tried:
        lines.append("What the agents tried:")
        lines.extend(f"• {t}" for t in tried[:MAX_TRIED_LINES])
        if len(tried) > MAX_TRIED_LINES:
            lines.append(f"• {more_lines(len(tried) - MAX_TRIED_LINES)}")
    if disagreements := list(disagreements):
        lines.append("The agents disagreed:")
        lines.extend(f"• {d}" for d in disagreements)
    return "\n".join(lines) + f"\n{transcript_ref(ask_id)}{transcript_link(link)}"


MAX_TRIED_LINES = 8


def more_lines(count: int) -> str:
    """The last line of a list cut short: the rest is in the transcript."""
    return f"\u2026 and {count} more (see the transcript)"


def tried_search(agent: str) -> str:
    """That an agent searched its member's memory: all anyone but that member reads of its searches (the words it
    searched for and how much it found would tell what the member's memory holds)."""
    return f"{agent}'s agent searched {agent}'s messages"


def search_outcome(skipped: str | None, failed: bool, hits: int) -> str:
    """How one search ended, as "What the agents tried" says it (an error's text is never repeated)."""
    return skipped or ("failed" if failed else f"{hits} results")


def tried_own_search(agent: str, kind: str, params: Mapping[str, object], outcome: str) -> str:
    """One search of the viewer's own agent, in full (their own memory: theirs to read)."""
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if v not in (None, [], "", 0, False))
    return f"{agent}'s agent: {kind} {shown} -> {outcome}"


def tried_recruit(agent: str, member: str) -> str:
    return f"{agent}'s agent asked {member}'s agent"


_TRIED_AGENT = re.compile(r"^(?P<agent>[^\s']+)'s agent[: ]")


def tried_in_public(tried: Iterable[str]) -> list[str]:
    """What the agents tried, as a post others than the requester may read: which agents searched, never for what
    nor how much they found; whom an agent asked is left to the transcript (it shows it to the question's
    audience)."""
    agents = [m["agent"] for line in tried if (m := _TRIED_AGENT.match(line)) and "'s agent asked " not in line]
    return [tried_search(agent) for agent in dict.fromkeys(agents)]


def reference_own(channel: str, when: str, sender: str, message_id: str) -> str:
    """A message the requester can see: where to open it."""
    return f"#{channel}, {when}, {sender} (message {message_id})"


def reference_quote(text: str, holder: str, channel: str) -> str:
    """A message the requester cannot see, quoted as the colleague's agent shared it."""
    return f"\u201c{text}\u201d \u2014 shared by {holder}'s agent (from #{channel})"


def prompt_withheld() -> str:
    return "(not kept: the member did not approve sharing this turn, so nothing of it is recorded)"


def prompt_failed() -> str:
    return "(not kept: this turn failed before anything of it was shared, so nothing of it is recorded)"


def origin_direct() -> str:
    return "a direct message to askwith"


def origin_channel(name: str, *, in_thread: bool) -> str:
    return f"a thread in #{name}" if in_thread else f"#{name}"


def final_failure(ask_id: int, reason: str, *, link: str | None = None) -> str:
    return f"Sorry, I could not answer this ask: {reason}\n{transcript_ref(ask_id)}{transcript_link(link)}"


def failure_llm_unavailable() -> str:
    return "the language model did not respond (it kept failing or timing out). Please try again later."


def failure_llm_misconfigured(reason: str) -> str:
    return (
        f"the language model is misconfigured, so the agents could not work ({reason}). "
        "Please tell whoever runs askwith."
    )


def failure_llm_output() -> str:
    return "the language model kept answering in a form I could not read. Please try again."


def failure_unanswerable() -> str:
    return "the agents could not find what is needed to answer it in what their members can see."


def failure_internal() -> str:
    return "something went wrong on our side while answering it. The team has been told."


def failure_memory_unavailable() -> str:
    return (
        "part of askwith's memory search is unavailable right now, so the agents could not search everything "
        "their members can see. Please try again in a few minutes."
    )


def memory_unavailable_note() -> str:
    return (
        "Note: part of askwith's memory search was unavailable while the agents worked, so this answer may miss "
        "something. Asking again in a few minutes may find more."
    )


# ---------------------------------------------------------------------- member settings (every platform)
SHARE_MEANING = {
    SharePolicy.AUTO: "your agent shares what it finds",
    SharePolicy.ASK: "your agent asks you (by DM) before sharing anything it found",
    SharePolicy.NEVER: "your agent politely declines to take part",
}


def memory_state(opted_in: bool) -> str:
    return "on: askwith remembers what you can see" if opted_in else "off: askwith does not remember anything"


def time_zone_state(chosen: str | None, profile: str | None, workspace: str) -> str:
    """Which zone a member reads deadlines and times in, and why (every surface's `/askwith timezone` says this)."""
    if chosen:
        return f"{chosen} (you chose it; `/askwith timezone auto` goes back to {profile or workspace})"
    if profile:
        return f"{profile} (your profile's; `/askwith timezone Europe/Paris` picks another)"
    return f"{workspace} (the workspace's; `/askwith timezone Europe/Paris` picks your own)"


def memory_off_effect() -> str:
    """What turning memory off does, exactly (every platform says this when a member turns it off)."""
    return (
        "askwith stops at once reading anything with your own token (your DMs), no longer reads channels for your "
        "sake (a channel stays remembered for colleagues in it who have memory on), and colleagues' agents can no "
        "longer ask yours. What it already remembers of your DMs stays until you forget it."
    )


def forgot(deleted: Mapping[str, int]) -> str:
    """`/askwith forget` done: what was deleted (rows per kind, `bot.asks.forget.forget_member`)."""
    return (
        f"Done: askwith deleted your memory: {deleted.get('channel', 0)} conversation(s) only you could see "
        f"({deleted.get('message', 0)} message(s)), {deleted.get('ask', 0)} ask(s) of yours with their transcripts, "
        "and your token; your memory is off. Channels a colleague with memory on reads stay remembered for them."
    )


def disconnected(had_token: bool) -> str:
    if not had_token:
        return "askwith holds no token of yours: it reads only the channels its bot was invited to."
    return (
        "Done: your token is revoked and forgotten; askwith no longer reads your DMs. What it already remembered of "
        "them stays until you forget it."
    )


def token_disabled(reason: str) -> str:
    return (
        f"askwith stopped reading your DMs: your authorisation no longer works ({reason}). Nobody's agent reads "
        "what it remembered of them until you connect again."
    )


# ---------------------------------------------------------------------- progress, cancel, follow-ups, feedback
_STAGE_TEXTS = {
    "queued": "Starting…",
    "planning": "Planning what to find out…",
    "searching": "Searching {name}'s messages…",
    "talking": "Talking with {name}'s agent…",
    "bringing_in": "Bringing in {name}'s agent…",
    "waiting": "Waiting for {name}'s agent…",
    "agreeing": "Agreeing on an answer…",
    "done": "Answered.",
    "unsupported": "Answered, but no message the agents could share supports the answer.",
    "failed": "Could not answer this ask.",
    "cancelled": "Cancelled.",
}


def progress_stage(stage: str, name: str = "") -> str:
    """The status line of an ask at a stage (bot.asks.progress.Stage); `name`: whom the stage concerns."""
    text = _STAGE_TEXTS.get(stage, stage)
    if "{name}" in text and not name:
        text = {
            "searching": "Searching messages…",
            "talking": "The agents are talking…",
            "waiting": "Waiting for a colleague's agent…",
        }.get(stage, text)
    return text.format(name=name)


def final_cancelled(ask_id: int, by: str, *, link: str | None = None) -> str:
    return f"This ask was cancelled by {by}; the agents stopped.\n{transcript_ref(ask_id)}{transcript_link(link)}"


def cancel_not_allowed() -> str:
    return "Only the member who asked (or an admin) can cancel this ask."


def cancel_too_late(status: str) -> str:
    return f"This ask has already finished ({status}); there is nothing to cancel."


def follow_up_not_found(ask_id: int) -> str:
    return f"There is no earlier ask #{ask_id} here to follow up."


def follow_up_not_allowed() -> str:
    return "You can follow up only your own asks, or asks answered where you asked."


def earlier_answer_withheld(names: list[str]) -> str:
    """A follow-up's background in place of an earlier answer that rests on what these members' agents let out to a
    narrower audience than the follow-up's (`bot.asks.background`)."""
    return (
        f"(withheld from this follow-up: it rests on what {', '.join(names)} shared with the earlier ask's "
        "people only; ask them again to share it here)"
    )


def feedback_not_allowed() -> str:
    return "Only members who could see this ask's answer can rate it."


def answer_not_allowed() -> str:
    return "This ask's answer is for the member who asked, the colleagues it involved and the channel it was asked in."


def answer_not_yours() -> str:
    """An ask's answer shown to someone who was not in the audience of all it rests on (a member brought in)."""
    return "The answer rests on what colleagues' agents shared with others in this ask, so it is not shown to you."


def feedback_invalid() -> str:
    return "Feedback is 👍 or 👎."


def feedback_thanks(vote: int) -> str:
    return "Thanks for the 👍." if vote > 0 else "Thanks: the 👎 is noted with this ask."


def source_withheld(holder: str) -> str:
    """A source the viewer cannot open and whose words the share screen did not release to them."""
    return f"(a message {holder}'s agent relied on; not shown to you)" if holder else "(a message not shown to you)"
