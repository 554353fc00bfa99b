from __future__ import annotations

import pytest

from bot.bench.items import BenchItem, Metric
from bot.bench.scoring import (
    ScoreMethod,
    accepted_answers,
    extract_count,
    normalized_match,
    score_count,
    score_item,
    score_names,
    score_spans,
)
from bot.bench.timeslots import clock, format_span, parse_spans, slots_of, spans_of
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.types import LLMRequest


VOCABULARY = ["painting", "studying", "yoga", "board game night", "reading", "cooking class"]


def test_iou_matches_the_papers_example() -> None:
    # Prediction 9:00-12:00, truth 10:00-14:00: 2 hours shared over 5 hours covered.
    assert score_spans("9:00-12:00", ["10:00-14:00"]).value == pytest.approx(0.4)
    assert score_spans("from 9 AM to 12 PM", ["10:00-14:00"]).value == pytest.approx(0.4)


def test_iou_over_several_spans() -> None:
    score = score_spans('"9:00-11:00", "13:30-16:30"', ["9:00-11:00", "13:30-16:30", "19:30-20:00"])
    assert score.value == pytest.approx(10 / 11)  # 10 of 11 gold slots found, nothing extra
    assert score.method is ScoreMethod.SLOT_IOU
    assert score_spans("nobody is ever free", ["9:00-11:00"]).value == 0.0


def test_medium_f1_with_a_missed_and_an_extra_activity() -> None:
    # Gold: painting and studying. The answer finds painting, misses studying and adds yoga: P = R = 1/2.
    score = score_names("The longest ones are Painting and yoga.", ["painting", "studying"], VOCABULARY)
    assert score.value == pytest.approx(0.5)
    assert score.detail["predicted"] == ["painting", "yoga"]
    assert score_names("painting, studying", ["painting", "studying"], VOCABULARY).value == 1.0
    assert score_names("no idea", ["painting"], VOCABULARY).value == 0.0


def test_medium_matches_longest_names_first() -> None:
    score = score_names("the board game night", ["board game night"], [*VOCABULARY, "board game"])
    assert score.detail["predicted"] == ["board game night"]


def test_easy_takes_the_first_stand_alone_number() -> None:
    assert extract_count("At least 3 activities must be deleted.") == 3
    assert extract_count("Delete three: yoga at 9:30 and lunch at 12:00.") == 3
    assert extract_count("From 9:30, 2 of them clash") == 2
    assert extract_count("none overlap") is None
    assert score_count("You need to delete 4.", 4).value == 1.0
    assert score_count("You need to delete 5.", 4).value == 0.0


def test_normalized_match_needs_every_part() -> None:
    assert normalized_match("It was The Wheel of Time!", [["Wheel of Time"]]).value == 1.0
    parts = [["credit card"], ["Monica Geller", "Monica"]]
    assert normalized_match("1) her credit card 2) Monica", parts).value == 1.0
    assert normalized_match("1) her credit card 2) Rachel", parts).value == 0.0


def test_timeslots_round_trip() -> None:
    assert clock(0) == "0:00" and clock(19) == "9:30" and clock(48) == "24:00"
    assert parse_spans("9:00-11:00 and 13:30 until 16:00") == [(18, 22), (27, 32)]
    assert spans_of(slots_of([(18, 22), (22, 24), (30, 31)])) == [(18, 24), (30, 31)]
    assert format_span((27, 32)) == "13:30-16:00"
    assert parse_spans("3-4 times") == []


def _item(metric: Metric, gold: dict) -> BenchItem:
    return BenchItem("x-1", "np", "worlds/x.json", ("bob", "charlie"), "What board game do both enjoy?", metric, gold)


async def test_judge_uses_the_papers_prompt_and_reads_the_verdict() -> None:
    backend = ScriptedBackend(lambda request: "1" if "Catan" in request.messages[0]["content"] else "0")
    client = LLMClient(backend)
    item = _item(Metric.JUDGE, {"answer": "Settlers of Catan", "alternatives": []})
    score = await score_item(item, "They both love Catan.", judge_client=client)
    assert score.value == 1.0 and score.method is ScoreMethod.LLM_JUDGE
    prompt = backend.requests[0].messages[0]["content"]
    assert "experienced human labeler for reading comprehension" in prompt
    assert "The ground truth answer is Settlers of Catan." in prompt
    assert "The model prediction is They both love Catan." in prompt
    assert isinstance(backend.requests[0], LLMRequest) and backend.requests[0].purpose == "bench_judge"


async def test_without_a_judge_a_one_answer_item_scores_a_concise_match() -> None:
    item = _item(Metric.JUDGE, {"answer": "Settlers of Catan", "alternatives": []})
    score = await score_item(item, "settlers of catan")
    assert score.value == 1.0 and score.method is ScoreMethod.CONCISE_MATCH
    assert score.detail["em"] == 1.0 and score.detail["containment"] == 1.0
    assert (await score_item(item, "Ticket to Ride")).value == 0.0
    dump = "Settlers of Catan. " + " ".join(f"They also talked about game number {i} at length." for i in range(5))
    dumped = await score_item(item, dump)
    assert dumped.value == 0.0 and dumped.detail["containment"] == 1.0  # pasting lines is no answer


async def test_score_item_dispatches_schedule_metrics() -> None:
    easy = _item(Metric.EXACT_COUNT, {"answer": "2", "count": 2})
    hard = _item(Metric.SLOT_IOU, {"answer": "10:00-14:00", "spans": ["10:00-14:00"]})
    medium = _item(Metric.NAME_F1, {"answer": "yoga", "activities": ["yoga"], "vocabulary": VOCABULARY})
    assert (await score_item(easy, "2 activities")).value == 1.0
    assert (await score_item(hard, "9:00-12:00")).value == pytest.approx(0.4)
    assert (await score_item(medium, "yoga")).value == 1.0


# ---------------------------------------------------------------- the failure cases a careful grader disagrees with
def test_easy_takes_the_number_next_to_the_deletions_not_an_earlier_one() -> None:
    assert extract_count("Between us we have 9 activities; the minimum is 4 deletions.") == 4
    assert extract_count("Of our 9 activities we must delete 4 to avoid overlaps.") == 4
    assert score_count("We share 9 activities. 4 deletions are needed.", 4).value == 1.0


def test_hard_reads_between_and_spans() -> None:
    assert parse_spans("everyone is free between 15:00 and 15:30") == [(30, 31)]
    assert score_spans("We are all free between 15:00 and 15:30.", ["15:00-15:30"]).value == 1.0


def test_medium_matches_stemmed_activity_names() -> None:
    vocabulary = [*VOCABULARY, "hiking", "pottery", "woodworking"]
    assert score_names("The longest is a hike.", ["hiking"], vocabulary).value == 1.0
    assert score_names("studies and paintings", ["painting", "studying"], vocabulary).value == 1.0
    assert score_names("It is not pottery, it is hiking.", ["hiking"], vocabulary).value == 1.0
    trips = [*VOCABULARY, "hiking trip", "pottery workshop"]
    assert score_names("The longest is the hike.", ["hiking trip"], trips).value == 1.0
    assert score_names("Pottery and a long hike", ["hiking trip"], trips).value == pytest.approx(2 / 3)
    assert score_names("We did not go hiking; painting.", ["painting"], trips).value == 1.0


def test_hedged_or_negated_answers_score_zero_without_a_judge() -> None:
    assert normalized_match("Either woodworking or pottery", [["pottery"]]).value == 0.0
    assert normalized_match("It is not pottery", [["pottery"]]).value == 0.0
    assert normalized_match("Maybe pottery?", [["pottery"]]).value == 0.0
    assert normalized_match("It is pottery.", [["pottery"]]).value == 1.0
    assert normalized_match("Not woodworking: pottery.", [["pottery"]]).value == 1.0


async def test_with_a_judge_model_schedule_answers_are_extracted_by_it_first() -> None:
    replies = {"minimum number": "4", "Map each activity": "hiking, painting", "time span": "15:00-15:30"}

    def script(request: LLMRequest) -> str:
        prompt = request.messages[0]["content"]
        return next(reply for key, reply in replies.items() if key in prompt)

    backend = ScriptedBackend(script)
    client = LLMClient(backend)
    easy = _item(Metric.EXACT_COUNT, {"answer": "4", "count": 4})
    medium = _item(Metric.NAME_F1, {"answer": "", "activities": ["hiking", "painting"],
                                    "vocabulary": [*VOCABULARY, "hiking"]})  # fmt: skip
    hard = _item(Metric.SLOT_IOU, {"answer": "", "spans": ["15:00-15:30"]})
    score = await score_item(easy, "9 activities in all, and four must go", judge_client=client)
    assert score.value == 1.0 and score.method is ScoreMethod.EXACT_COUNT_LLM
    score = await score_item(medium, "a long hike and some painting", judge_client=client)
    assert score.value == 1.0 and score.method is ScoreMethod.NAME_F1_LLM
    score = await score_item(hard, "from three to half past three in the afternoon", judge_client=client)
    assert score.value == 1.0 and score.method is ScoreMethod.SLOT_IOU_LLM
    assert {r.purpose for r in backend.requests} == {"bench_extract"}


async def test_friendstv_template_items_need_both_parts_and_composed_items_their_own_answer() -> None:
    parts = [{"answer": "Mardi Gras", "answers": ["Mardi Gras"]}, {"answer": "Shelley", "answers": ["Shelley"]}]
    template = _item(Metric.JUDGE, {"answer": "Mardi Gras; Shelley", "parts": parts, "composed_by": "template"})
    assert (await score_item(template, "Mardi Gras. Shelley")).value == 1.0
    assert (await score_item(template, "Mardi Gras, and it was Shelley")).value == pytest.approx(0.7)  # F1, not EM
    assert (await score_item(template, "Mardi Gras")).value == 0.5  # the mean over parts: one half of two
    composed = _item(Metric.JUDGE, {"answer": "Lowell", "parts": parts, "composed_by": "gpt-4o"})
    assert (await score_item(composed, "It was Lowell.")).value == 1.0
    assert (await score_item(composed, "Mardi Gras; Shelley")).value == 0.0


SPANS = [
    {"answer": "date tonight is with Paul the Wine Guy", "answers": ["date tonight is with Paul the Wine Guy"],
     "spans": ["date tonight is with Paul the Wine Guy", "Paul the Wine Guy"]},
    {"answer": "across the hall", "answers": ["across the hall"], "spans": ["across the hall", "I might be late"]},
]  # fmt: skip


@pytest.mark.parametrize(
    ("prediction", "value"),
    [
        ("Paul; across the hall", 1.0),  # a short answer inside a span
        ("Paul the Wine Guy, and they live across the hall.", 1.0),  # a whole span inside the answer
        ("First: the wine guy. Second: I might be late", 1.0),  # a hedge inside the span is the span's own
        ("Maybe Paul; across the hall", 0.0),  # hedged
        ("Not Paul; across the hall", 0.0),  # negated
        ("Oh, the; across the hall", 0.0),  # filler is no answer
        ("across the hall", 0.0),  # one part alone
    ],
)
async def test_friendstv_containment_accepts_any_annotated_span_and_a_short_answer_inside_one(
    prediction: str, value: float
) -> None:
    item = _item(Metric.JUDGE, {"answer": "date; across the hall", "parts": SPANS, "composed_by": "template"})
    assert normalized_match(prediction, accepted_answers(item)).value == value
    assert (await score_item(item, prediction)).detail["containment"] == value  # kept as a labelled extra


@pytest.mark.parametrize(
    ("prediction", "em", "f1"),
    [
        ("Paul the Wine Guy; across the hall", 1.0, 1.0),  # both best spans, exactly
        ("Paul; across the hall", 0.5, 0.75),  # part 1: F1 of "paul" against "paul wine guy"
        ("Maybe Paul the Wine Guy; across the hall", 0.5, 0.5),  # hedged: part 1 not stated
        ("Not Paul the Wine Guy; across the hall", 0.5, 0.5),  # negated
        ("Oh, the; across the hall", 0.0, 0.4),  # filler answers nothing, and weighs on every part
        ("across the hall", 0.5, 0.5),  # one part alone
    ],
)
async def test_friendstv_scores_friendsqa_em_and_f1_per_part_against_the_best_span(
    prediction: str, em: float, f1: float
) -> None:
    item = _item(Metric.JUDGE, {"answer": "date; across the hall", "parts": SPANS, "composed_by": "template"})
    score = await score_item(item, prediction)
    assert score.method is ScoreMethod.TOKEN_F1
    assert (score.detail["em"], score.value) == (em, pytest.approx(f1, abs=0.01))


async def test_the_judge_reads_every_span_of_a_template_items_parts() -> None:
    backend = ScriptedBackend(lambda request: "1")
    item = _item(Metric.JUDGE, {"answer": "date; across the hall", "parts": SPANS, "composed_by": "template"})
    assert (await score_item(item, "Paul; across the hall", judge_client=LLMClient(backend))).value == 1.0
    prompt = backend.requests[0].messages[0]["content"]
    assert '"Paul the Wine Guy" OR "date tonight is with Paul the Wine Guy"' in prompt
    assert '"I might be late" OR "across the hall"' in prompt  # shortest first, ties by text
    assert "any one of these wordings" in prompt  # the spans are alternatives of one answer
