"""Properties of the span scorers: pasting more never pays, degenerate spans are never gold, adversarial answers
(the scene pasted, the question repeated, a gold span negated) score low."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.bench.answer_metrics import PartGold, degenerate, span_scores, tokens, valid_spans
from bot.bench.items import BenchItem, Metric
from bot.bench.scoring import rule_score


GOLD_WORDS = ["paul", "wine", "guy", "across", "hall", "tonight", "rome", "credit", "card", "marcel", "monkey"]
OTHER_WORDS = ["zebra", "quartz", "violin", "harbour", "sandwich", "glacier", "pencil", "orbit", "tulip", "lantern"]
FILLER = ["you", "oh", "the", "it", "yeah", "he", "well"]
PARTS = [
    PartGold("When is Monica having a date with Paul?", ("tonight", "date tonight is with Paul the Wine Guy", "you"),
             frozenset({"monica", "joey"})),
    PartGold("Where are Chandler and Joey staying?", ("across the hall", "Joey Tribbiani", "page"),
             frozenset({"joey", "chandler"})),
]  # fmt: skip
QUESTION = "First: When is Monica having a date with Paul? Second: Where are Chandler and Joey staying?"
SCENE = [
    "Monica: There's nothing to tell! He's just some guy I work with!",
    "Joey: C'mon, you're going out with the guy! There's gotta be something wrong with him!",
    "Phoebe: Wait, does he eat chalk?",
    "Monica: Okay, everybody relax. This is not even a date.",
    "Rachel: So, tonight is with Paul the Wine Guy?",
    "Ross: And Chandler and Joey live across the hall.",
    "Chandler: Sounds like a date to me.",
    "Joey: Hey, I'm Joey Tribbiani.",
]

words = st.lists(st.sampled_from(GOLD_WORDS + FILLER), min_size=1, max_size=6).map(" ".join)
answers = st.lists(words, min_size=1, max_size=4).map("; ".join)
unrelated = st.lists(st.lists(st.sampled_from(OTHER_WORDS), min_size=1, max_size=8).map(" ".join), min_size=1,
                     max_size=5)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(answers, unrelated)
def test_no_answer_scores_higher_by_appending_unrelated_lines(answer: str, lines: list[str]) -> None:
    before = span_scores(answer, PARTS, QUESTION)
    after = span_scores("\n".join([answer, *lines]), PARTS, QUESTION)
    assert after.f1 <= before.f1 and after.em <= before.em


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["you", "page", "Joey Tribbiani", "Bitch.", "you would", "Oh, him"]), st.sampled_from(FILLER))
def test_a_degenerate_span_never_makes_an_answer_correct(span: str, filler: str) -> None:
    parts = [PartGold("Why doesn't Chandler think her mom is cool?", (span,), frozenset({"chandler", "joey"})),
             PartGold("Why did Joey leave the party?", (span, "Joey Tribbiani"), frozenset({"joey"}))]  # fmt: skip
    assert all(degenerate(s, p.question, p.names) for p in parts for s in p.spans)
    for answer in (span, f"{span}; {span}", f"{filler} {span}"):
        scores = span_scores(answer, parts)
        assert scores.em == 0.0 and scores.f1 == 0.0


def test_degenerate_spans_are_left_out_by_a_general_rule_and_real_ones_kept() -> None:
    assert valid_spans(PARTS[0]) == ["tonight", "date tonight is with Paul the Wine Guy"]  # "you": a pronoun
    assert valid_spans(PARTS[1]) == ["across the hall", "page"]  # a bare name does not answer "where"
    assert degenerate("page", "Why doesn't Chandler think her mom is cool?")  # one word is no reason
    assert not degenerate("Central Perk", "Where are Chandler and Joey staying?", {"joey", "chandler"})
    assert not degenerate("Joey Tribbiani", "Who lives across the hall?", {"joey"})


def test_the_chats_apostrophe_variants_read_as_one() -> None:
    assert tokens("I wonīt go") == tokens("I won't go") == tokens("I won’t go") == ["i", "wont", "go"]
    part = [PartGold("Why won't he look at me?", ("women won't look at me",))]
    assert span_scores("women wonīt look at me", part).em == 1.0


def test_adversarial_answers_score_low() -> None:
    right = span_scores("Tonight. Across the hall.", PARTS, QUESTION)
    assert (right.em, right.f1) == (1.0, 1.0)
    scene = span_scores("\n".join(SCENE), PARTS, QUESTION)  # every gold line is in it
    repeated = span_scores(QUESTION, PARTS, QUESTION)
    negated = span_scores("Not tonight. Not across the hall.", PARTS, QUESTION)
    for name, scores in {"scene": scene, "question": repeated, "negated": negated}.items():
        assert scores.em == 0.0 and scores.f1 < 0.35, (name, scores.f1)


def _item(gold: dict) -> BenchItem:
    return BenchItem("x-1", "np", "worlds/x.json", ("bob", "carol"), "Which tea does Carol like?", Metric.JUDGE, gold)


@settings(max_examples=100, deadline=None)
@given(unrelated)
def test_a_one_answer_item_never_scores_higher_by_appending_lines(lines: list[str]) -> None:
    item = _item({"answer": "rooibos", "alternatives": ["rooibos tea"]})
    for answer in ("Carol likes rooibos.", "Chamomile", "Not rooibos"):
        assert rule_score(item, "\n".join([answer, *lines])).value <= rule_score(item, answer).value


def test_a_one_answer_item_pasting_every_line_or_naming_a_decoy_scores_zero() -> None:
    item = _item({"answer": "rooibos", "alternatives": []})
    assert rule_score(item, "Carol likes rooibos.").value == 1.0
    assert rule_score(item, "Carol likes chamomile.").value == 0.0
    pasted = "\n".join(["carol: I drink chamomile at night", "carol: rooibos is my favourite", *SCENE])
    score = rule_score(item, pasted)
    assert score.value == 0.0 and score.detail["containment"] == 1.0
