"""What agents say in the agents' conversation when they cannot or will not go on, and agents' text made readable for
people (the message ids agents cite by removed).

    conversation_texts.agent_closes(complete=True)    # "I have what the question needs."
    conversation_texts.without_ids("Friday [m0000006].")   # "Friday."
"""

from __future__ import annotations

import re


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


# A message id an agent cites by, alone or in a list: "[m0000006]", "[alice:m0000006, m0000005]", "[1700.0001]".
_ID = r"[^\]\s,;]*\d[^\]\s,;]*"


_CITATION = re.compile(rf"\s*\[{_ID}(?:\s*[,;]\s*{_ID})*\]")


def without_ids(text: str) -> str:
    """Text an agent wrote, without the message ids it cites by (for agents, not for people)."""
    return re.sub(r"(?<!\.)\.\.(?!\.)", ".", _CITATION.sub("", text)).replace(" ;", ";")
