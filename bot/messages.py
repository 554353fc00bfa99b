"""Every user-facing text of the ask flow, in one place, as functions (bolt's `logger/messages.py` style).

Adapters render these strings as they are; the model never sees them (its text lives in `prompts/`).
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.port import SharePolicy


# ---------------------------------------------------------------------- rejected requests
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


def agent_withholds(owner: str) -> str:
    return f"{owner} did not approve sharing what I found, so I have to keep it to myself."


def approval_title(owner_requester: str) -> str:
    return f"Share this with {owner_requester}'s agent?"


def approval_body(question: str, utterance: str) -> str:
    return f"They asked: {question}\nYour agent would reply:\n> {utterance}"


def hidden_thread_title(ask_id: int, requester: str, colleagues: Iterable[str], question: str) -> str:
    return f"ask #{ask_id}: {requester} with {', '.join(colleagues)}: {question}"


def hidden_turn(agent_owner: str, utterance: str, depth: int) -> str:
    indent = "↳ " * depth
    return f"{indent}{agent_owner}'s agent: {utterance}"


def share_notice(requester: str, question: str, shared: Iterable[str]) -> str:
    lines = "\n".join(f"> {text}" for text in shared)
    return f"Your askwith agent answered {requester}'s question \u201c{question}\u201d and shared:\n{lines}"


# ---------------------------------------------------------------------- results
def transcript_ref(ask_id: int) -> str:
    return f"(transcript: `askwith transcripts show {ask_id}`)"


def transcript_link(link: str | None) -> str:
    return f"\nOpen the transcript: {link}" if link else ""


def final_answer(ask_id: int, answer: str, citations: Iterable[str], *, link: str | None = None) -> str:
    cited = "\n".join(f"• {line}" for line in citations)
    based_on = f"\nBased on:\n{cited}" if cited else ""
    return f"{answer}{based_on}\n{transcript_ref(ask_id)}{transcript_link(link)}"


def final_failure(ask_id: int, reason: str, *, link: str | None = None) -> str:
    return f"Sorry, I could not answer this ask: {reason}\n{transcript_ref(ask_id)}{transcript_link(link)}"


def failure_llm_unavailable() -> str:
    return "the language model did not respond (it kept failing or timing out). Please try again later."


def failure_llm_output() -> str:
    return "the language model kept answering in a form I could not read. Please try again."


def failure_no_conversation() -> str:
    return "none of the agents could take part in the conversation."


def failure_unanswerable() -> str:
    return "the agents could not find what is needed to answer it in what their members can see."


def failure_internal() -> str:
    return "something went wrong on our side while answering it. The team has been told."


def citation(need: str, value: str, owner: str, source: str) -> str:
    where = f" [{source}]" if source else ""
    return f"{need}: {value} ({owner}'s agent{where})"


# ---------------------------------------------------------------------- member settings (every platform)
SHARE_MEANING = {
    SharePolicy.AUTO: "your agent shares what it finds",
    SharePolicy.ASK: "your agent asks you (by DM) before sharing anything it found",
    SharePolicy.NEVER: "your agent politely declines to take part",
}


def memory_state(opted_in: bool) -> str:
    return "on: askwith remembers what you can see" if opted_in else "off: askwith does not remember anything"
