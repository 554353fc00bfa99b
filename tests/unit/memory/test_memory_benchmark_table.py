"""The combined memory benchmark's table: every acceptance figure, its target, and an honest pass/miss mark."""

from __future__ import annotations

import pytest

from benchmarks.memory import Target, table


def figures(**overrides: float) -> dict[str, float]:
    base = {
        "ingest_messages": 11_593, "ingest_messages_per_s": 100.0, "ingest_summaries_per_s": 9.7, "ingest_s": 116.0,
        "ingest_cpu_s": 200.0, "model_summaries_per_s": 10.5, "model_s": 107.0, "model_cpu_s": 190.0,
        "ingest_to_model_ratio": 0.92, "ingest_to_model_cpu_ratio": 0.95, "ingest_without_model_s": 9.0,
        "rerun_added": 0, "rerun_ms": 40.0,
        "friendstv_queries": 200, "friendstv_p50_ms": 1.0, "friendstv_p95_ms": 3.0, "friendstv_cpu_p50_ms": 0.9,
        "friendstv_cpu_p95_ms": 2.5, "friendstv_like_scan_speedup": 4.0,
        "fuzzy_searches": 200, "fuzzy_p50_ms": 15.0, "fuzzy_p95_ms": 40.0, "fuzzy_cpu_p50_ms": 10.0,
        "fuzzy_cpu_p95_ms": 20.0, "fuzzy_hit_at_3": 0.55,
    }  # fmt: skip
    return base | overrides


def synthetic(**overrides: float) -> dict[str, float]:
    generated = dict(
        synthetic_messages=1_000_000, synthetic_queries=200, synthetic_p50_ms=5.0, synthetic_p95_ms=20.0,
        synthetic_cpu_p50_ms=4.0, synthetic_cpu_p95_ms=15.0, like_scan_speedup=40.0,
        synthetic_like_scan_cpu_speedup=45.0, synthetic_like_indexed_speedup=12.0, synthetic_setup_s=1.0,
    )  # fmt: skip
    return figures(**generated) | overrides


def row(text: str, figure: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(figure))


def test_every_acceptance_figure_is_checked_against_its_target() -> None:
    text = table(synthetic(), header="h")
    for figure, target in [
        ("ingest / bare model throughput", ">= 0.8"),
        ("clear, FriendsTV", "<= 5 ms"),
        ("clear, 1,000,000 msg", "<= 50 ms"),
        ("LIKE '%kw%' scan speed-up, 1,000,000 msg", ">= 10x"),
    ]:
        line = row(text, figure)
        assert target in line and line.endswith("pass"), line
    assert text.splitlines()[-1] == "5 targets met, 0 missed"


@pytest.mark.parametrize(
    ("override", "figure"),
    [
        ({"ingest_to_model_ratio": 0.79}, "ingest / bare model throughput"),
        ({"friendstv_p95_ms": 5.01}, "clear, FriendsTV"),
        ({"synthetic_p95_ms": 50.5}, "clear, 1,000,000 msg"),
        ({"like_scan_speedup": 9.9}, "LIKE '%kw%' scan speed-up, 1,000,000"),
        ({"rerun_added": 1}, "  rerun adds"),
    ],
)
def test_a_figure_beyond_its_target_is_marked_missed(override: dict[str, float], figure: str) -> None:
    text = table(synthetic(**override), header="h")
    assert row(text, figure).endswith("MISS")
    assert text.splitlines()[-1] == "4 targets met, 1 missed"


def test_skipping_the_generated_workspace_says_so_and_checks_the_rest() -> None:
    text = table(figures(), header="h")
    assert row(text, "clear, 1,000,000 messages").rstrip().endswith("skipped (--skip-1m)")
    assert "LIKE '%kw%' scan speed-up, 1,000,000" not in text
    assert text.splitlines()[-1] == "3 targets met, 0 missed"


def test_targets_include_their_bound() -> None:
    assert Target(0.8, at_least=True).met(0.8) and not Target(0.8, at_least=True).met(0.7999)
    assert Target(5, at_least=False).met(5) and not Target(5, at_least=False).met(5.001)
