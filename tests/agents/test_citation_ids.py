"""Citations name message ids whatever the platform's id looks like (Slack's hold a colon: channel:ts)."""

from __future__ import annotations

from bot.agents.notebook import ids_in


SLACK_ID = "GCNOTES:1772355660.000000"


def test_a_slack_id_relayed_or_bracketed_is_read_whole_when_known() -> None:
    known = {SLACK_ID, "DDBOB:1772356020.000000"}
    assert ids_in(f"[{SLACK_ID}]", known) == [SLACK_ID]
    assert ids_in(f"alice:{SLACK_ID}, bob:DDBOB:1772356020.000000.", known) == [SLACK_ID, "DDBOB:1772356020.000000"]
    assert ids_in(f"blackboard:bob:{SLACK_ID}", known) == [SLACK_ID]


def test_short_ids_and_sessions_read_as_before() -> None:
    assert ids_in("bob:m12, [m14]") == ["m12", "m14"]
    assert ids_in("bob:m12", {"m12"}) == ["m12"]
    assert ids_in("session:k1") == ["session:k1"]
