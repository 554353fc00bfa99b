"""One result per finished item, stored as its own file so a killed run loses at most the items in flight.

store = ResultStore(run_dir)
store.done_ids()              # items a rerun skips
store.save(result)            # written to a temporary file, then renamed: a file is either whole or absent
store.load_all()
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from bot.errors import BenchError


RESULTS_DIR = "results"


@dataclass
class ItemResult:
    item_id: str
    dataset: str
    question: str
    gold: str  # the readable gold answer
    answer: str  # what the agents answered ("" when the ask failed)
    status: str  # done | failed (the ask's status) | error (the run could not ask at all)
    failure: str | None  # the user-readable reason, when there is no answer
    score: float  # 0..1
    scorer: str  # llm_judge | normalized_match | exact_count | name_f1 | slot_iou
    score_detail: dict[str, Any]
    ask_id: int | None
    ablations: list[str]  # as recorded with the ask
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_s: float  # summed latency of the ask's LLM calls
    wall_s: float  # the ask, end to end (validation, conversations, consensus, delivery)
    ingest_s: float  # time this item spent ingesting its workspace (0 when another item had ingested it)
    behaviour: dict[str, Any] = field(default_factory=dict)  # InfoNav statistics (bot.asks.metrics)
    citations: dict[str, int] = field(default_factory=dict)  # lines cited, gold among them (bot.bench.citations)

    @property
    def overhead_s(self) -> float:
        """The system's own time: the ask's wall time minus the time spent inside the LLM."""
        return self.wall_s - self.llm_s

    def dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ItemResult:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


class ResultStore:
    def __init__(self, run_dir: Path) -> None:
        self.directory = Path(run_dir) / RESULTS_DIR

    def _path(self, item_id: str) -> Path:
        if "/" in item_id or "\\" in item_id or item_id.startswith("."):
            raise BenchError(f"Item id {item_id!r} cannot name a result file.")
        return self.directory / f"{item_id}.json"

    def done_ids(self) -> set[str]:
        if not self.directory.is_dir():
            return set()
        return {p.stem for p in self.directory.glob("*.json")}

    def save(self, result: ItemResult) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(result.item_id)
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(result.dict(), handle, ensure_ascii=False, sort_keys=True, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)

    def load_all(self) -> list[ItemResult]:
        if not self.directory.is_dir():
            return []
        paths = sorted(self.directory.glob("*.json"))
        return [ItemResult.from_dict(json.loads(p.read_text(encoding="utf-8"))) for p in paths]
