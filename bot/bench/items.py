"""The dataset format every generator writes and every runner reads.

A dataset directory holds:

    dataset.json      name, seed, item count, format version
    items.jsonl       one `BenchItem` per line
    worlds/*.json     the workspaces (`bot.store.world.World` files) the items are replayed in
    card.md           the dataset card

An item names its world file, the asking pair (member ids: the asker first, then the member asked with), the
question and the gold answer, so a runner can replay it as a workspace: load the world, ingest it, ask.
Everything is written with sorted keys and fixed content, so one seed gives byte-identical files.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from bot.errors import BenchDataError
from bot.store.world import World


FORMAT_VERSION = 1
MANIFEST = "dataset.json"
ITEMS = "items.jsonl"
CARD = "card.md"
WORLDS = "worlds"


class Metric(StrEnum):
    JUDGE = "judge"  # NP, FriendsTV: LLM judge (or normalized match when no judge is configured)
    EXACT_COUNT = "exact_count"  # Schedule Easy
    NAME_F1 = "name_f1"  # Schedule Medium
    SLOT_IOU = "slot_iou"  # Schedule Hard


@dataclass(frozen=True)
class BenchItem:
    id: str
    dataset: str
    world: str  # world file, relative to the dataset directory
    asking: tuple[str, str]  # member ids: who asks, and the member asked with
    question: str
    metric: Metric
    gold: dict[str, Any]  # always has "answer" (readable); plus the metric's own fields
    evidence: tuple[str, ...] = ()  # message ids holding what the answer needs
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["asking"], data["evidence"], data["metric"] = list(self.asking), list(self.evidence), str(self.metric)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchItem:
        return cls(
            id=data["id"],
            dataset=data["dataset"],
            world=data["world"],
            asking=(data["asking"][0], data["asking"][1]),
            question=data["question"],
            metric=Metric(data["metric"]),
            gold=dict(data["gold"]),
            evidence=tuple(data.get("evidence", ())),
            provenance=dict(data.get("provenance", {})),
        )


@dataclass
class Dataset:
    name: str
    seed: int
    items: list[BenchItem]
    worlds: dict[str, World]  # file path relative to the dataset directory -> world
    card: str
    variant: str = "paper"  # a generator variant; "paper" is the paper's construction


def dumps(data: Any) -> str:
    """The one JSON spelling used in dataset files: sorted keys, UTF-8, no floats' locale surprises."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def write_dataset(dataset: Dataset, out: Path) -> None:
    """Write (or rewrite) a dataset directory. Refuses a non-empty directory that is not a dataset."""
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise BenchDataError(f"{out} is not empty and holds no {MANIFEST}; choose an empty or new directory.")
    shutil.rmtree(out / WORLDS, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    for relative, world in sorted(dataset.worlds.items()):
        world.save(out / relative)
    lines = [dumps(item.to_dict()) + "\n" for item in dataset.items]
    (out / ITEMS).write_text("".join(lines), encoding="utf-8")
    (out / CARD).write_text(dataset.card.rstrip() + "\n", encoding="utf-8")
    manifest = {"dataset": dataset.name, "seed": dataset.seed, "items": len(dataset.items), "format": FORMAT_VERSION}
    if dataset.variant != "paper":  # the paper's datasets keep their bytes
        manifest["variant"] = dataset.variant
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_manifest(directory: Path) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise BenchDataError(f"{directory} is not a dataset directory (no {MANIFEST}); run `askwith bench generate`.")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT_VERSION:
        raise BenchDataError(f"{path} has format {manifest.get('format')!r}; expected {FORMAT_VERSION}.")
    return manifest


def load_items(directory: Path) -> list[BenchItem]:
    read_manifest(directory)
    lines = (Path(directory) / ITEMS).read_text(encoding="utf-8").splitlines()
    return [BenchItem.from_dict(json.loads(line)) for line in lines if line.strip()]


def load_world(directory: Path, item: BenchItem) -> World:
    return World.load(Path(directory) / item.world)
