"""The final answer of an ask as text: the answer with the messages each claim rests on, an unsupported answer with
what the agents tried, references to the sources, and who may read an answer.

    answer_texts.final_cited_answer(42, "Friday.", [("The launch is Friday", ["#launch, Mon, bob"])], [])
    answer_texts.tried_in_public(["bob's agent: clear keywords=['launch'] -> 3 results"])
    # ["bob's agent searched bob's messages"]: which agents searched, never for what
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bot.texts.transcript_texts import transcript_link, transcript_ref


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


def answer_not_allowed() -> str:
    return "This ask's answer is for the member who asked, the colleagues it involved and the channel it was asked in."


def answer_not_yours() -> str:
    """An ask's answer shown to someone who was not in the audience of all it rests on (a member brought in)."""
    return "The answer rests on what colleagues' agents shared with others in this ask, so it is not shown to you."


def source_withheld(holder: str) -> str:
    """A source the viewer cannot open and whose words the share screen did not release to them."""
    return f"(a message {holder}'s agent relied on; not shown to you)" if holder else "(a message not shown to you)"
