"""Operator metrics in the Prometheus text exposition format (version 0.0.4), computed from the database.

Counters come from the record rather than from process memory, so they survive restarts and add up across several
ask workers sharing one database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import func, select

from bot.asks import models as asks
from bot.store import models
from bot.store.db import Database, as_utc


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
    async with db.session() as session:
        by_status = dict(
            (await session.execute(select(asks.Ask.status, func.count()).group_by(asks.Ask.status))).all()
        )
        calls, prompt, completion = (
            await session.execute(
                select(
                    func.count(asks.LLMCall.id),
                    func.coalesce(func.sum(asks.LLMCall.prompt_tokens), 0),
                    func.coalesce(func.sum(asks.LLMCall.completion_tokens), 0),
                )
            )
        ).one()
        lag_rows = (await session.execute(_last_cursor_move_by_workspace())).all()
    return [
        Metric("askwith_asks_started_total", "counter", "Asks accepted (queued) since the database was created.",
               [({}, sum(by_status.values()))]),
        Metric("askwith_asks_finished_total", "counter", "Asks answered.", [({}, by_status.get("done", 0))]),
        Metric("askwith_asks_failed_total", "counter", "Asks that ended in a failure.",
               [({}, by_status.get("failed", 0))]),
        Metric("askwith_asks_in_progress", "gauge", "Asks queued or running now.",
               [({}, by_status.get("queued", 0) + by_status.get("running", 0))]),
        Metric("askwith_llm_calls_total", "counter", "LLM calls made by asks.", [({}, calls)]),
        Metric("askwith_llm_tokens_total", "counter", "LLM tokens used by asks.",
               [({"kind": "prompt"}, prompt), ({"kind": "completion"}, completion)]),
        Metric("askwith_ingestion_lag_seconds", "gauge",
               "Seconds since ingestion last moved a history cursor of the workspace.",
               [({"workspace": name}, max(0.0, (now - as_utc(moved)).total_seconds())) for name, moved in lag_rows]),
    ]  # fmt: skip


def _last_cursor_move_by_workspace():  # noqa: ANN202 - a Select
    return (
        select(models.Workspace.name, func.max(models.IngestCursor.updated_at))
        .join(models.Channel, models.Channel.workspace_id == models.Workspace.id)
        .join(models.IngestCursor, models.IngestCursor.channel_id == models.Channel.id)
        .group_by(models.Workspace.name)
    )
