"""The texts of an ask's record: its hidden thread, the lines of its transcript a viewer may not read, where it was
asked, and where to open the transcript.

    transcript_texts.hidden_turn("bob", "Friday at 10.", depth=1)   # "↳ bob's agent: Friday at 10."
    transcript_texts.transcript_ref(42)                            # "(transcript: `askwith transcripts show 42`)"
"""

from __future__ import annotations

from collections.abc import Iterable


def said_to_others() -> str:
    """A transcript line a viewer was not in the audience of."""
    return "(said to others in this ask: not shared with you)"


def text_in_platform() -> str:
    """A live ask's record (it read Slack live and keeps no text): where its text and answer are instead."""
    return (
        "This ask read Slack live; its text stays in Slack only. The answer is where askwith posted it; this record "
        "keeps who took part, what happened and when."
    )


def hidden_thread_title(ask_id: int, requester: str, colleagues: Iterable[str], question: str) -> str:
    return f"ask #{ask_id}: {requester} with {', '.join(colleagues)}: {question}"


def hidden_turn(agent_owner: str, utterance: str, depth: int) -> str:
    indent = "↳ " * depth
    return f"{indent}{agent_owner}'s agent: {utterance}"


def transcript_ref(ask_id: int) -> str:
    return f"(transcript: `askwith transcripts show {ask_id}`)"


def transcript_link(link: str | None) -> str:
    return f"\nOpen the transcript: {link}" if link else ""


def prompt_withheld() -> str:
    return "(not kept: the member did not approve sharing this turn, so nothing of it is recorded)"


def prompt_failed() -> str:
    return "(not kept: this turn failed before anything of it was shared, so nothing of it is recorded)"


def origin_direct() -> str:
    return "a direct message to askwith"


def origin_channel(name: str, *, in_thread: bool) -> str:
    return f"a thread in #{name}" if in_thread else f"#{name}"
