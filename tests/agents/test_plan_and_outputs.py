"""InfoNav plan updates, fake-solved detection, and tolerant parsing of the model's answers."""

from __future__ import annotations

import pytest

from bot.agents.memory_tools import MAX_LIMIT, parse_clear, parse_fuzzy
from bot.agents.outputs import RecruitRequest, parse_act, parse_think
from bot.agents.plan import Fact, Plan, Rationale, Status, says_unknown
from bot.agents.steps import RecruitOutcome, TurnStep, recruits_of
from bot.errors import LLMOutputError


@pytest.mark.parametrize(
    "value", ["unknown", "Not found", "n/a", "N/A", "", "  ", "I could not find it", "not mentioned yet", "TBD"]
)
def test_values_that_say_unknown_are_fake_solved(value: str) -> None:
    assert says_unknown(value)


@pytest.mark.parametrize(
    "value",
    [
        "Room 4B",
        "14 March",
        "Bluebird",
        "Known issue in firmware 2.4",
        # Negative answers are facts, not "I do not know".
        "None of the activities overlap",
        "Joey didn't find the ring",
        "Free: none after 5pm",
        "none",
        "No, the launch was not moved",
    ],
)
def test_real_and_negative_values_are_not_fake_solved(value: str) -> None:
    assert not says_unknown(value)


def test_revise_counts_fake_solved_but_keeps_every_value() -> None:
    plan = Plan([Rationale("r1", "room"), Rationale("r2", "time"), Rationale("r3", "overlap")])
    update = plan.revise(
        [
            Rationale("r1", "room", Status.KNOWN, "Room 4B", "m3"),
            Rationale("r2", "time", Status.KNOWN, "unknown", ""),
            Rationale("r3", "overlap", Status.KNOWN, "None of the activities overlap", "m5"),
        ]
    )
    assert update.solved == ["r1", "r3"] and update.fake_solved == ["r2"]
    # Counted for the report, never erased: the model's own statement stands.
    assert [r.status for r in plan.rationales] == [Status.KNOWN] * 3
    assert [r.value for r in plan.rationales] == ["Room 4B", "unknown", "None of the activities overlap"]


def test_learn_keeps_negative_facts_and_respects_the_stated_status() -> None:
    plan = Plan([Rationale("r1", "ring"), Rationale("r2", "time"), Rationale("r3", "free")])
    update = plan.learn(
        [
            Fact("r1", "Joey didn't find the ring", "m7"),
            Fact("r2", "probably the morning", "m8", status="unknown"),  # the model says: still looking
            Fact("r3", "not found", ""),
        ]
    )
    assert update.solved == ["r1"] and update.fake_solved == ["r3"]
    assert plan.get("r1").value == "Joey didn't find the ring" and plan.get("r1").status is Status.KNOWN
    assert plan.get("r2").status is Status.UNKNOWN
    assert plan.get("r3").value == "not found"  # kept and counted as fake solved


def test_learn_fills_unknowns_only_and_an_empty_revision_keeps_the_plan() -> None:
    plan = Plan([Rationale("r1", "room", Status.KNOWN, "4B", "m1"), Rationale("r2", "time")])
    update = plan.learn([Fact("r1", "5C", "m9"), Fact("r2", "15:00", "m4"), Fact("r9", "x")])
    assert update.solved == ["r2"] and plan.get("r1").value == "4B" and plan.is_complete
    assert plan.revise([]).solved == [] and len(plan.rationales) == 2


def test_clear_and_fuzzy_parameters_are_clamped() -> None:
    params = parse_clear({"keywords": "launch, date", "limit": 500, "context_window": -3, "since": "yesterday"})
    assert params.keywords == ("launch", "date") and params.limit == MAX_LIMIT and params.context_window == 0
    assert params.since is None
    assert parse_fuzzy({"text": "launch", "top_k": "99"}).top_k == 5
    assert parse_fuzzy("launch plans").text == "launch plans"


def test_think_and_act_answers_of_the_wrong_shape_are_output_errors() -> None:
    with pytest.raises(LLMOutputError):
        parse_think({"clear": []}, with_plan=True)
    with pytest.raises(LLMOutputError):
        parse_think({"plan": [], "clear": "launch"}, with_plan=True)
    with pytest.raises(LLMOutputError):
        parse_act({"utterance": ""})
    think = parse_think({"plan": [{"id": "r1", "need": "x"}], "recruit": {"member": "@carol"}}, with_plan=True)
    assert [r.member for r in think.recruits] == ["carol"]  # one request as an object, as older answers gave it
    several = [{"member": m, "question": "q"} for m in ("carol", "@carol", "dave", "erin", "frank")]
    think = parse_think({"plan": [], "recruit": several}, with_plan=True)
    assert [r.member for r in think.recruits] == ["carol", "dave", "erin"]  # each once, at most MAX_RECRUITS
    act = parse_act({"utterance": "hi", "learned": [{"id": "r1", "value": "v"}, {"id": "r2"}], "answer": ""})
    assert [f.id for f in act.learned] == ["r1"] and act.answer is None


def test_a_turn_saved_with_one_sub_conversation_loads_as_a_list_of_them() -> None:
    outcome = RecruitOutcome(RecruitRequest("carol", "When?"), "done", conclusion="14 March", conversation_id=7)
    step = TurnStep(2, "bob", recruits=[outcome])
    assert TurnStep.from_dict(step.dict()).recruits == [outcome]
    older = {**step.dict(), "recruit": outcome.dict()}  # saved before several could run side by side
    del older["recruits"]
    assert TurnStep.from_dict(older).recruits == [outcome]
    assert recruits_of({"recruit": None}) == [] and recruits_of({}) == []
