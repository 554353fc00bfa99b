"""Who contributed: a colleague is credited with the lines of its own member's memory it let out, never with a fact
it relayed from the requester's memory; what it said is shown without internal message ids."""

from __future__ import annotations

from bot.asks.read_models.answer_view import answer_view
from bot.asks.read_models.contributions import SharedLine, contributions, own_ids, shared_lines, without_ids
from bot.asks.read_models.member_views import shared_by
from bot.asks.service import AskRequest
from bot.settings import Settings
from bot.store.db import Database
from tests.fakes.asks import CODE_NAME, LAUNCH, QUESTION, build, two_fact_world


KNOWN = {"m1", "m2", "C1:1700000000.000100"}


def test_relayed_ids_credit_their_holder_and_ids_leave_the_text() -> None:
    lines = [
        SharedLine("alice", "Code name Bluebird [m1]."),
        SharedLine("bob", "Found: code name Bluebird [alice:m1]; launch 14 March [m2]."),
        SharedLine("carol", "Only what I heard: [alice:blackboard:bob:m2], [blackboard:m1]"),
        SharedLine("dave", "Thread [C1:1700000000.000100], also [dave:m1] and [m99]."),
    ]
    found = contributions(lines, requester="alice", known=KNOWN)
    assert set(found) == {"bob", "carol", "dave"}, "the requester's own agent is nobody's colleague"
    assert found["bob"].own_sources == ["m2"]
    assert found["carol"].own_sources == []
    assert found["dave"].own_sources == ["C1:1700000000.000100", "m1"], "an unknown id is credited to nobody"
    assert found["bob"].said == ["Found: code name Bluebird; launch 14 March."]
    assert own_ids("[bob:session:7]", "bob", KNOWN) == ["session:7"]
    assert without_ids("Room 4B [m12], booked [alice:blackboard:x:m1].") == "Room 4B, booked."


def _record(member: str, text: str, verdict: str, kind: str = "turn") -> dict:
    sent = {"member": member, "kind": kind, "conversation_id": 1, "policy": "auto", "verdict": verdict, "text": text}
    return {"sharing": {"recruit_sent" if kind == "recruit" else "sent": sent}}


def test_only_what_left_an_agent_through_its_outbox_is_a_shared_line() -> None:
    turns = [
        ("bob", _record("bob", "a [m1]", "sent")),
        ("bob", _record("bob", "", "held")),  # not approved: nothing of it left
        ("bob", {"utterance": "said without the outbox [m3]", "shared_facts": True}),  # no outbox record: nothing
        ("carol", _record("carol", "who knows the launch date? [m4]", "sent", kind="recruit")),
    ]
    sides = [_record("bob", "b [m2]", "sent", kind="statement"), _record("carol", "", "held", kind="statement")]
    assert shared_lines(turns, sides) == [SharedLine("bob", "a [m1]"), SharedLine("bob", "b [m2]")]


async def test_the_answer_credits_each_colleague_with_its_own_memory_only(db: Database, settings: Settings) -> None:
    h = await build(db, two_fact_world(), settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["bob"], QUESTION))
    view = await answer_view(db, outcome.ask_id, viewer="alice", settings=settings)
    bob = next(c for c in view.contributors if c.handle == "bob")
    assert [s.text for s in bob.sources] == [LAUNCH], "Bob's own line; alice's code name is not his"
    assert bob.source_count == 1 and all(s.via == "bob" for s in bob.sources)
    assert bob.shared and not any("[" in line for line in bob.shared), bob.shared
    assert LAUNCH in [s.text for s in view.linked_sources]
    public = view.for_shared_place()
    assert all(s.text is None for c in public.contributors for s in c.sources), "no quote is posted in a channel"


async def test_a_colleague_that_only_relays_the_requesters_facts_gets_no_credit(
    db: Database, settings: Settings
) -> None:
    # The launch line is in Bob's DM with Erin; Carol knows neither fact, so whatever her agent says is relayed.
    h = await build(db, two_fact_world(), settings=settings)
    outcome = await h.service.ask(AskRequest("alice", ["carol"], "What is the project code name?"))
    view = await answer_view(db, outcome.ask_id, viewer="alice", settings=settings)
    carol = next(c for c in view.contributors if c.handle == "carol")
    assert carol.source_count == 0 and carol.sources == []
    assert not any(CODE_NAME in (s.text or "") for c in view.contributors for s in c.sources)
    assert not any("m0" in line or "[" in line for c in view.contributors for line in c.shared)
    log = await shared_by(db, h.service.workspace_id, "carol")
    assert not any("[" in item.text for item in log), "the sharing log shows no internal ids"
