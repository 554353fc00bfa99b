"""After an answer: following an earlier ask up, and rating an answer.

follow_up_texts.follow_up_not_found(42)   # "There is no earlier ask #42 here to follow up."
follow_up_texts.feedback_thanks(1)        # "Thanks for the 👍."
"""

from __future__ import annotations


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


def feedback_invalid() -> str:
    return "Feedback is 👍 or 👎."


def feedback_thanks(vote: int) -> str:
    return "Thanks for the 👍." if vote > 0 else "Thanks: the 👎 is noted with this ask."
