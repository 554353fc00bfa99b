"""Text the members see about a negotiation (approval prompts, outcome notes, CLI lines): kept in one place."""

from __future__ import annotations

from collections.abc import Sequence


SCRIPTED_NOTICE = (
    "SCRIPTED negotiators (a fixed policy, no language model): these figures test the pipeline, "
    "not any model's negotiation quality."
)


def task_list(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "nothing"


def approval_title(counterpart: str) -> str:
    return f"Accept the task trade your agent agreed with {counterpart}'s agent?"


def approval_body(*, gives: Sequence[str], receives: Sequence[str], before: float, after: float) -> str:
    return (
        f"You hand over: {task_list(gives)}\n"
        f"You take on: {task_list(receives)}\n"
        f"Your utility (by your own values): {before:.2f} -> {after:.2f}\n"
        "Nothing changes unless both of you accept."
    )


def trade_confirmed(counterpart: str) -> str:
    return f"The trade with {counterpart} is confirmed: your task list has been updated."


def trade_declined(counterpart: str) -> str:
    return f"The trade with {counterpart} was not accepted by both of you: your tasks stay as they were."


def no_agreement(counterpart: str, turns: int) -> str:
    return f"Your agent and {counterpart}'s agent found no trade in {turns} turns: your tasks stay as they were."


def negotiation_failed(counterpart: str) -> str:
    return f"The negotiation with {counterpart}'s agent broke down (invalid proposals): your tasks stay as they were."


# ---------------------------------------------------------------------- `/negotiate @bob` refused before it starts
def no_counterpart() -> str:
    return "Please name the one colleague to negotiate with, e.g. `/negotiate @bob`."


def one_counterpart_only() -> str:
    return "A negotiation is between two people: name exactly one colleague, e.g. `/negotiate @bob`."


def counterpart_is_bot(name: str) -> str:
    return f"{name} is a bot, not a colleague; please negotiate with a person."


def counterpart_is_yourself() -> str:
    return "You can't negotiate with yourself: name a colleague, e.g. `/negotiate @bob`."


def your_profile_missing() -> str:
    return "You have no negotiation profile yet (your tasks and what they are worth to you); ask an admin to load one."


def their_profile_missing(name: str) -> str:
    return f"{name} has no negotiation profile yet, so their agent has nothing to negotiate with; ask an admin."
