"""An ask while it runs: the status line of each stage, and cancelling it.

progress_texts.progress_stage("searching", "bob")   # "Searching bob's messages…"
progress_texts.cancel_too_late("done")
"""

from __future__ import annotations

from bot.texts.transcript_texts import transcript_link, transcript_ref


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
