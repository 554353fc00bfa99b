"""Why an ask was refused before it started: each problem with a request has one clear text (`AskService.validate`
raises `AskRejectedError` with it; adapters show it to the member as it is).

    rejection_texts.unknown_member("zoe")   # "I don't know anyone called 'zoe' in this workspace."
"""

from __future__ import annotations

from collections.abc import Iterable


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
