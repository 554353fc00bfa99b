"""The negotiation protocol's tags, parsed from an agent's message.

    <CONSIDER>private reflection</CONSIDER>                      turn 1 only; never delivered
    <PROPOSAL>{"give": ["IT"], "take": ["MKT-B"]} why</PROPOSAL>  a trade: I hand over `give`, I receive `take`
    <ACCEPT>why</ACCEPT>                                          accept the counterpart's last proposal
    <REJECT>why</REJECT>                                          reject it (a PROPOSAL beside it is a counter-offer)

Closing tags may be left out (`<ACCEPT>` alone is fine). Parsing only reads the shape; whether the ids exist and who
holds them is `validation`'s job.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum

from bot.negotiation.model import Proposal


class MoveKind(StrEnum):
    CONSIDER = "consider"
    PROPOSE = "propose"
    ACCEPT = "accept"
    REJECT = "reject"


class ParseProblem(StrEnum):
    NO_TAG = "no_tag"
    ACCEPT_AND_PROPOSE = "accept_and_propose"
    PROPOSAL_NOT_JSON = "proposal_not_json"
    PROPOSAL_SHAPE = "proposal_shape"


@dataclass(frozen=True)
class Move:
    kind: MoveKind
    text: str  # the prose inside the tags, for the transcript
    proposal: Proposal | None = None  # ids exactly as written; PROPOSE only

    def dict(self) -> dict[str, object]:
        proposal = self.proposal.dict() if self.proposal else None
        return {"kind": self.kind.value, "text": self.text, "proposal": proposal}


_TAGS = "CONSIDER|PROPOSAL|ACCEPT|REJECT"
_TAG_RE = re.compile(rf"<({_TAGS})\s*/?>(.*?)(?:</\1\s*>|(?=<(?:{_TAGS})\b)|\Z)", re.IGNORECASE | re.DOTALL)


def find_tags(text: str) -> dict[str, str]:
    """Tag name (upper case) -> body of its first occurrence."""
    found: dict[str, str] = {}
    for match in _TAG_RE.finditer(text):
        found.setdefault(match.group(1).upper(), match.group(2).strip())
    return found


def parse_consideration(text: str) -> str:
    """Turn 1's private reflection: the CONSIDER body, or the whole text if the tag was left out."""
    return find_tags(text).get("CONSIDER", text.strip())


def parse_move(text: str) -> Move | ParseProblem:
    """The move in a proposal-phase message, or what is wrong with its shape."""
    tags = find_tags(text)
    if "PROPOSAL" in tags and "ACCEPT" in tags:
        return ParseProblem.ACCEPT_AND_PROPOSE
    if "PROPOSAL" in tags:
        return _parse_proposal(tags["PROPOSAL"])
    if "ACCEPT" in tags:
        return Move(MoveKind.ACCEPT, tags["ACCEPT"])
    if "REJECT" in tags:
        return Move(MoveKind.REJECT, tags["REJECT"])
    return ParseProblem.NO_TAG


def _parse_proposal(body: str) -> Move | ParseProblem:
    start = body.find("{")
    if start < 0:
        return ParseProblem.PROPOSAL_NOT_JSON
    try:
        data, end = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError:
        return ParseProblem.PROPOSAL_NOT_JSON
    if not isinstance(data, dict):
        return ParseProblem.PROPOSAL_SHAPE
    give, take = _id_list(data.get("give", [])), _id_list(data.get("take", []))
    if give is None or take is None:
        return ParseProblem.PROPOSAL_SHAPE
    prose = (body[:start] + " " + body[end:]).strip()
    return Move(MoveKind.PROPOSE, prose, Proposal(give, take))


def _id_list(value: object) -> tuple[str, ...] | None:
    """A list of task ids as written (a lone string counts as a list of one); None if it is not that shape."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return None
    return tuple(dict.fromkeys(item.strip() for item in value))


def render_proposal(proposal: Proposal, note: str = "") -> str:
    """How a proposal is written in the protocol (the scripted negotiator and the transcript use it)."""
    body = json.dumps(proposal.dict())
    return f"<PROPOSAL>{body}{' ' + note if note else ''}</PROPOSAL>"
