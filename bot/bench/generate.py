"""`askwith bench generate`: build one dataset by name and write its directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.bench.friendstv.compose import Composer
from bot.bench.friendstv.dataset import build_friendstv_dataset
from bot.bench.items import Dataset, write_dataset
from bot.bench.persona.dataset import build_persona_dataset
from bot.bench.schedule.dataset import build_schedule_dataset
from bot.errors import BenchDataError
from bot.llm.client import LLMClient
from bot.settings import Settings


COMPOSE_CACHE = "compose-cache"  # under ASKWITH_DATA_DIR/bench: model-written FriendsTV questions, one file each


def _schedule(level: str) -> Callable[[Settings, int], Dataset]:
    return lambda settings, seed: build_schedule_dataset(level, seed)


VARIANTS = ("paper", "per-person")  # Schedule only; "paper" is the default everywhere


# name -> builder; the Schedule levels need no source data, NP and FriendsTV read ASKWITH_BENCH_DATA_DIR.
BUILDERS: dict[str, Callable[[Settings, int], Dataset]] = {
    "schedule-easy": _schedule("easy"),
    "schedule-medium": _schedule("medium"),
    "schedule-hard": _schedule("hard"),
    "np": lambda settings, seed: build_persona_dataset(settings.require("bench_data_dir"), seed),
    "friendstv": lambda settings, seed: build_friendstv_dataset(settings.require("bench_data_dir"), seed),
}

DATASETS = tuple(BUILDERS)


def generate(
    name: str,
    seed: int,
    out: Path,
    settings: Settings,
    *,
    composer_llm: LLMClient | None = None,
    variant: str = "paper",
) -> Dataset:
    """`composer_llm`: FriendsTV questions are written by this model (cached); None = the offline template.
    `variant`: Schedule's activity lengths, `paper` (default) or `per-person`."""
    if name not in BUILDERS:
        raise BenchDataError(f"Unknown dataset {name!r}; choose one of {', '.join(DATASETS)}.")
    if variant != "paper" and not name.startswith("schedule-"):
        raise BenchDataError(f"--variant {variant} applies to the Schedule datasets only.")
    if variant != "paper":
        dataset = build_schedule_dataset(name.removeprefix("schedule-"), seed, variant=variant)
    elif name == "friendstv" and composer_llm is not None:
        composer = Composer(llm=composer_llm, cache_dir=settings.data_dir / "bench" / COMPOSE_CACHE)
        dataset = build_friendstv_dataset(settings.require("bench_data_dir"), seed, composer=composer)
    else:
        dataset = BUILDERS[name](settings, seed)
    write_dataset(dataset, out)
    return dataset
