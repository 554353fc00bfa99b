"""`askwith bench generate`: build one dataset by name and write its directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.bench.friendstv.compose import Composer
from bot.bench.friendstv.dataset import build_friendstv_dataset
from bot.bench.friendstv.hidden import HIDDEN, NAMED
from bot.bench.friendstv.hidden import VARIANT as HIDDEN_VARIANT
from bot.bench.items import Dataset, write_dataset
from bot.bench.persona.dataset import build_persona_dataset
from bot.bench.schedule.dataset import build_schedule_dataset
from bot.errors import BenchDataError
from bot.llm.client import LLMClient
from bot.settings import Settings


COMPOSE_CACHE = "compose-cache"  # under ASKWITH_DATA_DIR/bench: model-written FriendsTV questions, one file each


def _schedule(level: str) -> Callable[[Settings, int], Dataset]:
    return lambda settings, seed: build_schedule_dataset(level, seed)


# dataset -> its variants besides "paper" (the default everywhere): Schedule's activity lengths; FriendsTV's
# "find who knows" (no question names the people holding the answers, `friendstv.hidden`).
OTHER_VARIANTS = {"schedule": ("per-person",), "friendstv": (HIDDEN_VARIANT,)}
VARIANTS = ("paper", "per-person", HIDDEN_VARIANT)


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
    `variant`: `paper` (default); Schedule's `per-person` activity lengths; FriendsTV's `find-who-knows`."""
    if name not in BUILDERS:
        raise BenchDataError(f"Unknown dataset {name!r}; choose one of {', '.join(DATASETS)}.")
    family = name.split("-")[0]
    if variant != "paper" and variant not in OTHER_VARIANTS.get(family, ()):
        allowed = ", ".join(f"{v} ({f})" for f, vs in OTHER_VARIANTS.items() for v in vs)
        raise BenchDataError(f"--variant {variant} does not apply to {name}; the variants are {allowed}.")
    if family == "schedule" and variant != "paper":
        dataset = build_schedule_dataset(name.removeprefix("schedule-"), seed, variant=variant)
    elif name == "friendstv" and (composer_llm is not None or variant != "paper"):
        cache = settings.data_dir / "bench" / COMPOSE_CACHE
        composer = Composer(llm=composer_llm, cache_dir=cache) if composer_llm is not None else None
        anchor = HIDDEN if variant == HIDDEN_VARIANT else NAMED
        dataset = build_friendstv_dataset(settings.require("bench_data_dir"), seed, composer=composer, anchor=anchor)
    else:
        dataset = BUILDERS[name](settings, seed)
    write_dataset(dataset, out)
    return dataset
