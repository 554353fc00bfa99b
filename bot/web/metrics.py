"""Operator metrics in the Prometheus text exposition format (version 0.0.4), computed from the database.

Counters come from the record rather than from process memory, so they survive restarts and add up across several
ask workers sharing one database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.asks.totals import ask_totals
from bot.store.db import Database, as_utc
from bot.store.ingest_progress import last_cursor_moves


CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Metric:
    name: str
    kind: str  # counter | gauge
    help: str
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)


def render(metrics: list[Metric]) -> str:
    lines: list[str] = []
    for metric in metrics:
        lines.append(f"# HELP {metric.name} {metric.help}")
        lines.append(f"# TYPE {metric.name} {metric.kind}")
        for labels, value in metric.samples:
            lines.append(f"{metric.name}{_labels(labels)} {_number(value)}")
    return "\n".join(lines) + "\n"


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    escaped = (f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return "{" + ",".join(escaped) + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


async def collect(db: Database, *, now: datetime | None = None) -> list[Metric]:
    now = now or datetime.now(UTC)
    totals = await ask_totals(db)
    by_status = totals.by_status
    moves = await last_cursor_moves(db)
    return [
        Metric("askwith_asks_started_total", "counter", "Asks accepted (queued) since the database was created.",
               [({}, sum(by_status.values()))]),
        Metric("askwith_asks_finished_total", "counter", "Asks answered.", [({}, by_status.get("done", 0))]),
        Metric("askwith_asks_failed_total", "counter", "Asks that ended in a failure.",
               [({}, by_status.get("failed", 0))]),
        Metric("askwith_asks_in_progress", "gauge", "Asks queued or running now.",
               [({}, by_status.get("queued", 0) + by_status.get("running", 0))]),
        Metric("askwith_llm_calls_total", "counter", "LLM calls made by asks.", [({}, totals.llm_calls)]),
        Metric("askwith_llm_tokens_total", "counter", "LLM tokens used by asks.",
               [({"kind": "prompt"}, totals.prompt_tokens), ({"kind": "completion"}, totals.completion_tokens)]),
        Metric("askwith_ingestion_lag_seconds", "gauge",
               "Seconds since ingestion last moved a history cursor of the workspace.",
               [({"workspace": name}, max(0.0, (now - as_utc(moved)).total_seconds())) for name, moved in moves]),
    ]  # fmt: skip
