"""Why an ask could not be answered, as the final post says it: one reason per kind of failure, none repeating an
error's own text.

    failure_texts.final_failure(42, failure_texts.failure_llm_unavailable())
"""

from __future__ import annotations

from bot.texts.transcript_texts import transcript_link, transcript_ref


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
