from __future__ import annotations

import pytest

from bot.errors import MemoryQueryError
from bot.memory.keywords import MAX_KEYWORDS, coordination_stems, fts5_expression, search_terms


def test_keywords_become_lower_case_phrases_of_plain_words() -> None:
    assert search_terms(["Coffee", "Central  Perk", "coffee", "the"]) == (("coffee",), ("central", "perk"))
    # Possessive and contraction endings are no words: "monica's" finds "Monica"; "don't" and "we're" are stop words.
    assert search_terms(["Monica's", "don't", "we’re", "Chandler’s job"]) == (("monica",), ("chandler", "job"))


def test_operators_and_quotes_are_only_separators() -> None:
    terms = search_terms(['" OR 1=1 --', "NEAR(a b)", "text:*", "-x", "(y)", "z*", "'); DROP TABLE message; --"])
    assert terms == (
        ("or", "1", "1"),
        ("near", "a", "b"),
        ("text",),
        ("x",),
        ("y",),
        ("z",),
        ("drop", "table", "message"),
    )
    expression = fts5_expression(terms)
    assert expression.count('"') == 2 * len(terms)
    assert not any(ch in expression for ch in "*-^;'")


def test_the_expression_searches_text_and_optionally_scope_tokens() -> None:
    assert fts5_expression([("a",), ("b", "c")]) == 'text : ("a" OR "b c")'
    assert fts5_expression([("a",)], [3, 14]) == 'text : ("a") AND scope : (c3 OR c14)'


def test_blank_keywords_are_an_error() -> None:
    for blank in ([], [""], ["  ", "?!", "--"]):
        with pytest.raises(MemoryQueryError):
            search_terms(blank)


def test_stop_words_alone_leave_nothing_to_search() -> None:
    assert search_terms(["the", "is it"]) == ()
    assert search_terms(["the end"]) == (("the", "end"),)  # a phrase keeps its stop words


def test_keywords_are_capped() -> None:
    assert len(search_terms([f"word{i}" for i in range(100)])) == MAX_KEYWORDS


def test_stop_words_are_dropped_before_the_cap() -> None:
    keywords = ["what", "her", "up", "the"] * 20 + ["rehearsal"]
    assert search_terms(keywords) == (("rehearsal",),)


def test_coordination_counts_a_stem_per_phrase_once() -> None:
    # A phrase counts by its longest word; word forms of one stem count once.
    terms = search_terms(["hiking", "hikes", "central perk", "party"])
    assert coordination_stems(terms) == ("hik", "central", "party")
