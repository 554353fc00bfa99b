"""Dev and test splits of the generated items: tune on dev, report test.

An item's split follows from what it was drawn from, never from its position, so it is the same in every run and
every copy of a dataset:

- FriendsTV: its FriendsQA scene. A stable hash of the scene id puts about half the scenes in dev; every item of a
  scene is on the same side, so no scene's dialogue or questions are seen by both splits.
- NP and the three Schedule levels: the dataset's seed. Seeds below `TEST_SEEDS_FROM` are dev (the default seed 0
  among them, which the scripted stand-in was built and checked on); seeds from `TEST_SEEDS_FROM` on are test. Every
  item of a seed is drawn from that seed alone (its own day, or its own pair of persona conversations and needles).

    split_of(item)                        # "dev" or "test"
    item_splits(dataset_dir)              # item id -> split, for a dataset directory
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from bot.bench.items import ITEMS, BenchItem, load_items
from bot.errors import BenchError


DEV, TEST, ALL = "dev", "test", "all"
SPLITS = (DEV, TEST)
CHOICES = (TEST, DEV, ALL)  # what `askwith bench report --split` accepts; test first: it is the default
DEV_PERCENT = 50  # FriendsTV: share of scenes (by hash bucket of 100) in dev
TEST_SEEDS_FROM = 100  # NP and Schedule: seeds 0-99 are dev, 100 and above test


def scene_split(scene: str) -> str:
    """A FriendsQA scene id ("s01_e21_c03") -> its split, by a hash that no Python run or platform changes."""
    bucket = int(hashlib.sha256(f"friendstv-scene:{scene}".encode()).hexdigest()[:8], 16) % 100
    return DEV if bucket < DEV_PERCENT else TEST


def seed_split(seed: int) -> str:
    return DEV if seed < TEST_SEEDS_FROM else TEST


def split_of(item: BenchItem) -> str:
    if item.dataset == "friendstv":
        return scene_split(str(item.provenance["scene"]))
    if "seed" not in item.provenance:
        raise BenchError(f"{item.id} records no seed; its split cannot be told.")
    return seed_split(int(item.provenance["seed"]))


@cache
def item_splits(directory: Path) -> dict[str, str]:
    """Item id -> split for a dataset directory ({} when the directory no longer holds its items)."""
    if not (Path(directory) / ITEMS).is_file():
        return {}
    return {item.id: split_of(item) for item in load_items(Path(directory))}


def check_choice(split: str) -> str:
    if split not in CHOICES:
        raise BenchError(f"Unknown split {split!r}; choose one of {', '.join(CHOICES)}.")
    return split


def describe(split: str) -> str:
    """One sentence for a report: which items its figures are over."""
    rule = f"FriendsTV by scene, NP and Schedule by seed: dev = seeds below {TEST_SEEDS_FROM}, test = the rest"
    if split == ALL:
        return f"Figures over every item, dev and test together ({rule})."
    tune = "; tune on dev, quote test" if split == TEST else "; for tuning, not for quoting"
    return f"Figures over the {split} split only{tune} ({rule})."


def in_split(split: str, item_split: str | None) -> bool:
    """`all` takes every item, even one whose split cannot be told (its dataset was deleted)."""
    return split == ALL or item_split == split
