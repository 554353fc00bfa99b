"""`askwith bench generate`: build one dataset by name and write its directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.bench.friendstv.dataset import build_friendstv_dataset
from bot.bench.items import Dataset, write_dataset
from bot.bench.persona.dataset import build_persona_dataset
from bot.bench.schedule.dataset import build_schedule_dataset
from bot.errors import BenchDataError
from bot.settings import Settings


def _schedule(level: str) -> Callable[[Settings, int], Dataset]:
    return lambda settings, seed: build_schedule_dataset(level, seed)


# name -> builder; the Schedule levels need no source data, NP and FriendsTV read ASKWITH_BENCH_DATA_DIR.
BUILDERS: dict[str, Callable[[Settings, int], Dataset]] = {
    "schedule-easy": _schedule("easy"),
    "schedule-medium": _schedule("medium"),
    "schedule-hard": _schedule("hard"),
    "np": lambda settings, seed: build_persona_dataset(settings.require("bench_data_dir"), seed),
    "friendstv": lambda settings, seed: build_friendstv_dataset(settings.require("bench_data_dir"), seed),
}
DATASETS = tuple(BUILDERS)


def generate(name: str, seed: int, out: Path, settings: Settings) -> Dataset:
    if name not in BUILDERS:
        raise BenchDataError(f"Unknown dataset {name!r}; choose one of {', '.join(DATASETS)}.")
    dataset = BUILDERS[name](settings, seed)
    write_dataset(dataset, out)
    return dataset
