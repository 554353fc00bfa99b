from __future__ import annotations

import pytest

from bot.negotiation.model import Proposal
from bot.negotiation.protocol import MoveKind, ParseProblem, parse_consideration, parse_move
from bot.negotiation.validation import Verdict, validate_move
from tests.negotiation_helpers import small_scenario


def _validate(message: str, *, mover: str = "alice", table: Proposal | None = None) -> Verdict:
    scenario = small_scenario()
    return validate_move(parse_move(message), scenario=scenario, allocation=scenario.initial, mover=mover, table=table)


def test_tags_parse_with_and_without_closing_tags() -> None:
    move = parse_move('Here goes. <REJECT>Too costly.</REJECT><PROPOSAL>{"give": ["Y"], "take": "W"} fair?</PROPOSAL>')
    assert move.kind is MoveKind.PROPOSE and move.proposal == Proposal(("Y",), ("W",)) and move.text == "fair?"
    assert parse_move("<accept>Deal.").kind is MoveKind.ACCEPT
    assert parse_move("<REJECT>No.</REJECT>").kind is MoveKind.REJECT
    assert parse_consideration("<CONSIDER>I dislike Y.</CONSIDER>") == "I dislike Y."
    assert parse_move("sure, sounds good") is ParseProblem.NO_TAG
    assert parse_move('<ACCEPT>ok</ACCEPT><PROPOSAL>{"give": ["Y"]}</PROPOSAL>') is ParseProblem.ACCEPT_AND_PROPOSE
    assert parse_move("<PROPOSAL>I give you Y</PROPOSAL>") is ParseProblem.PROPOSAL_NOT_JSON
    assert parse_move('<PROPOSAL>{"give": [1]}</PROPOSAL>') is ParseProblem.PROPOSAL_SHAPE


def test_a_valid_proposal_is_made_canonical() -> None:
    verdict = _validate('<PROPOSAL>{"give": ["yearly review"], "take": ["w"]}</PROPOSAL>')
    assert verdict.ok and verdict.move is not None and verdict.move.proposal == Proposal(("Y",), ("W",))


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("no tags at all", "Your message has no move in it: write exactly one PROPOSAL, ACCEPT or REJECT tag."),
        ("<PROPOSAL>Y for W</PROPOSAL>", 'The PROPOSAL tag must start with a JSON object such as {"give": ["T1"]'),
        ('<PROPOSAL>{"give": "Y", "take": {"W": 1}}</PROPOSAL>', '"give" and "take" must each be a list of task ids'),
        (
            '<PROPOSAL>{"give": ["HR"], "take": ["W"]}</PROPOSAL>',
            "Unknown atomic task(s): HR. The tasks are: X, Y, Z, W.",
        ),
        ('<PROPOSAL>{"give": ["Z"], "take": ["W"]}</PROPOSAL>', "You don't hold Z. You hold: X, Y."),
        ('<PROPOSAL>{"give": ["Y"], "take": ["X"]}</PROPOSAL>', "bob doesn't hold X. bob holds: Z, W."),
        ('<PROPOSAL>{"give": ["Y"], "take": ["Y"]}</PROPOSAL>', "Y cannot be both given and taken."),
        ('<PROPOSAL>{"give": [], "take": []}</PROPOSAL>', "A proposal must give or take at least one task."),
        ("<ACCEPT>deal</ACCEPT>", "There is no proposal from bob on the table to accept."),
        (
            '<ACCEPT>ok</ACCEPT><PROPOSAL>{"give": ["Y"]}</PROPOSAL>',
            "You cannot accept and propose in the same message.",
        ),
    ],
)
def test_each_rule_gives_targeted_feedback(message: str, expected: str) -> None:
    verdict = _validate(message)
    assert not verdict.ok
    assert expected in verdict.text


def test_all_problems_of_a_proposal_are_reported_together() -> None:
    verdict = _validate('<PROPOSAL>{"give": ["Z", "HR"], "take": ["X"]}</PROPOSAL>')
    assert len(verdict.feedback) == 3
    assert "Unknown atomic task(s): HR." in verdict.text and "You don't hold Z." in verdict.text
    assert "bob doesn't hold X." in verdict.text


def test_accept_and_reject_need_no_checks_beyond_a_table() -> None:
    assert _validate("<ACCEPT>deal</ACCEPT>", table=Proposal(("W",), ())).ok
    assert _validate("<REJECT>no</REJECT>").ok
