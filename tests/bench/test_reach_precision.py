"""The evidence-reach figures keep precision and correctness beside recall: a "cite everything" answer shows low
cited precision, a wrong answer a low score, and a share over no items says n/a instead of 0."""

from __future__ import annotations

from benchmarks.evidence_reach import beside, precision_report
from benchmarks.reach_figures import ItemFigures, summary
from bot.bench.items import BenchItem, Metric


def figures(*, needs_third_party: bool = False, subconversations: int = 0) -> ItemFigures:
    return ItemFigures(lines=2, shown=2, shared=2, final=2, cited=2, reachable=2, wordless=0,
                       needs_third_party=needs_third_party, subconversations=subconversations,
                       calls_critical_path=3, prompt_tokens=100, llm_calls=3)  # fmt: skip


ITEM = BenchItem("np-001", "np", "worlds/np.json", ("bob", "carol"), "Which tea does Carol like?", Metric.JUDGE,
                 {"answer": "rooibos", "alternatives": []}, evidence=("m1", "m2"))  # fmt: skip


def test_cite_everything_shows_as_low_precision_and_a_decoy_as_wrong_beside_full_recall() -> None:
    dump, right = figures(), figures()
    beside(dump, ITEM, "Carol drinks chamomile.\nShe also said many things.", {"cited": 22, "cited_gold": 2})
    beside(right, ITEM, "Carol likes rooibos.", {"cited": 2, "cited_gold": 2})
    worst = summary([dump])
    assert worst["cited"] == 1.0 and worst["cited_precision"] == round(2 / 22, 4)  # recall 1.00, precision 0.09
    assert worst["score_mean"] == 0.0 and worst["em_mean"] == 0.0 and worst["answer_lines_mean"] == 2
    both = summary([dump, right])
    assert both["cited_precision"] == round(4 / 24, 4) and both["score_mean"] == 0.5


def test_subconversation_share_is_n_a_where_no_item_needs_a_third_party() -> None:
    none_needed = summary([figures(), figures()])
    assert none_needed["subconversation_share"] is None
    assert summary([figures(needs_third_party=True, subconversations=1)])["subconversation_share"] == 1.0
    nothing_cited = figures()
    beside(nothing_cited, ITEM, "", {"cited": 0, "cited_gold": 0})
    row = summary([nothing_cited])
    assert row["cited_precision"] is None
    table = precision_report({"np": row})
    assert "cit.prec" in table and "n/a" in table.splitlines()[2]
