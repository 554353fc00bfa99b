"""Who contributed, in Block Kit: only colleagues who shared lines of their own memory are credited, their sources as
permalinks where the asker may open them; a colleague who kept a share back is named plainly."""

from __future__ import annotations

from adapters.slack.answer_blocks import answer_blocks
from bot.asks.read_models.answer_view import AnswerView, ContributorView, SourceView
from bot.texts import approval_texts


OWN = SourceView("bob", "Bob", True, "launch 14 March", "launch", "bob", "2026-03-01 09:00", "C1", "C1:1.000100")
QUOTED = SourceView("dave", "Dave", False, "budget 4,000", "dave-erin", "dave", "2026-03-01 10:00")
LINKS = {("C1", "C1:1.000100"): "https://acme.slack.com/archives/C1/p1000100"}


def _context_texts(view: AnswerView) -> list[str]:
    blocks = answer_blocks(view, "UALICE", LINKS)
    return [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]


def test_credit_goes_with_own_sources_only_and_a_refusal_is_said_plainly() -> None:
    view = AnswerView(
        ask_id=3, status="done", question="When?", requester="alice", answer="14 March", failure=None,
        contributors=[
            ContributorView("bob", "Bob", ["launch 14 March"], [OWN], False),
            ContributorView("carol", "Carol", ["what alice said"], [], False),  # relayed only
            ContributorView("dave", "Dave", ["budget 4,000"], [QUOTED], True),
            ContributorView("erin", "Erin", [], [], False, withheld="denied"),
        ],
    )  # fmt: skip
    texts = _context_texts(view)
    line = next(t for t in texts if t.startswith("Contributed:"))
    assert line == (
        "Contributed: Bob's agent (1 source: <https://acme.slack.com/archives/C1/p1000100|#launch>); "
        "Dave's agent (1 source)"
    )
    assert "Carol" not in line and "Erin" not in line
    assert approval_texts.share_withheld("Erin", "denied") in texts
    assert texts[0] == "<@UALICE> asked: When?", "the answer says what it answers"
