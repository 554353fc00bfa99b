"""What one benchmark run is: which dataset, which model, which mechanisms switched off, which scorer.

A run directory holds exactly one configuration (`run.json`), its own database and vector index, and one result file
per finished item, so a run can be stopped and resumed, and several runs compared by `askwith bench report`.

    config = RunConfig.for_run(dataset_dir, model="gpt-4o", scripted=False, ablations=["no-infonav"], judge=True)
    config.save(run_dir); RunConfig.load(run_dir).label
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from bot.agents.ablations import Ablations
from bot.bench.generate import DATASETS
from bot.bench.items import read_manifest
from bot.errors import BenchError
from bot.settings import Settings


RUN_FILE = "run.json"
RUN_FORMAT = 1
SCRIPTED_LABEL = "scripted (not a quality figure)"

# The paper's setup (section 5): on Schedule, agents may not bring in further people ("we do not activate the
# agent's ability to initiate new communication due to the small scale of the social network").
SETUP_ABLATIONS: dict[str, tuple[str, ...]] = {
    "schedule-easy": ("no-recursion",),
    "schedule-medium": ("no-recursion",),
    "schedule-hard": ("no-recursion",),
}


@dataclass(frozen=True)
class RunConfig:
    dataset: str  # dataset name (schedule-easy ... friendstv)
    dataset_dir: str  # absolute path of the generated dataset
    seed: int
    model: str
    scripted: bool  # the deterministic stand-in played the model: a smoke test, never a quality figure
    ablations: list[str] = field(default_factory=list)  # chosen for this configuration (a row of Table 2)
    setup_ablations: list[str] = field(default_factory=list)  # the paper's per-dataset setup, always applied
    judge: str | None = None  # judge/extraction model; None = rule-based extraction and normalized match
    variant: str = "paper"  # the dataset's generator variant (Schedule lengths)
    anonymize_names: bool = False  # paper 6.4: FriendsTV characters renamed (prior-knowledge check)
    privacy_prompt: bool = False  # paper 6.4: agents told to protect private information
    format: int = RUN_FORMAT

    @classmethod
    def for_run(
        cls,
        dataset_dir: Path,
        *,
        model: str,
        scripted: bool,
        ablations: list[str],
        judge: str | None,
        anonymize_names: bool = False,
        privacy_prompt: bool = False,
    ) -> RunConfig:
        manifest = read_manifest(dataset_dir)
        name = str(manifest["dataset"])
        return cls(
            dataset=name,
            dataset_dir=str(Path(dataset_dir).resolve()),
            seed=int(manifest["seed"]),
            model=model,
            scripted=scripted,
            ablations=Ablations.parse(ablations).names(),
            setup_ablations=list(SETUP_ABLATIONS.get(name, ())),
            judge=judge,
            variant=str(manifest.get("variant", "paper")),
            anonymize_names=anonymize_names,
            privacy_prompt=privacy_prompt,
        )

    @property
    def options(self) -> list[str]:
        """The paper's section 6.4 options and a non-paper variant, as report columns show them."""
        chosen = [f"variant={self.variant}"] if self.variant != "paper" else []
        return chosen + ["anonymized names"] * self.anonymize_names + ["privacy prompt"] * self.privacy_prompt

    @property
    def effective_ablations(self) -> list[str]:
        return Ablations.parse([*self.ablations, *self.setup_ablations]).names()

    @property
    def label(self) -> str:
        """The configuration's row name in the report: model and the mechanisms switched off."""
        name = SCRIPTED_LABEL if self.scripted else self.model
        options = f" [{', '.join(self.options)}]" if self.options else ""
        return f"{name} {' '.join(self.ablations)}".strip() + options

    def slug(self) -> str:
        """A directory name for this configuration."""
        model = "scripted" if self.scripted else self.model
        options = [o.replace(" ", "_") for o in self.options]
        raw = "-".join([self.dataset, model, *self.ablations, *options])
        return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)

    def save(self, run_dir: Path) -> None:
        run_dir.mkdir(parents=True, exist_ok=True)
        path = run_dir / RUN_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, run_dir: Path) -> RunConfig:
        path = Path(run_dir) / RUN_FILE
        if not path.is_file():
            raise BenchError(f"{run_dir} is not a benchmark run directory (no {RUN_FILE}); see `askwith bench run`.")
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != RUN_FORMAT:
            raise BenchError(f"{path} has format {data.get('format')!r}; expected {RUN_FORMAT}.")
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def same_run_as(self, other: RunConfig) -> bool:
        """True when `other` may continue this run's results (everything but where the dataset lives agrees)."""
        mine, theirs = asdict(self), asdict(other)
        mine.pop("dataset_dir"), theirs.pop("dataset_dir")
        return mine == theirs


def bench_root(settings: Settings) -> Path:
    return settings.data_dir / "bench"


def resolve_dataset(spec: str, *, seed: int, settings: Settings, variant: str = "paper") -> tuple[Path, bool]:
    """(dataset directory, True when it still has to be generated) for a directory path or a dataset name."""
    path = Path(spec)
    if (path / "dataset.json").is_file():
        return path, False
    if spec in DATASETS:
        suffix = "" if variant == "paper" else f"-{variant}"
        target = bench_root(settings) / "datasets" / f"{spec}-seed{seed}{suffix}"
        return target, not (target / "dataset.json").is_file()
    raise BenchError(f"{spec} is neither a dataset directory nor a dataset name ({', '.join(DATASETS)}).")


def default_run_dir(config: RunConfig, settings: Settings) -> Path:
    return bench_root(settings) / "runs" / config.slug()


def check_resumable(run_dir: Path, config: RunConfig) -> None:
    """Refuse to mix two configurations in one run directory (their results would be averaged together)."""
    if not (run_dir / RUN_FILE).is_file():
        return
    saved = RunConfig.load(run_dir)
    if not saved.same_run_as(config):
        raise BenchError(
            f"{run_dir} holds a run of another configuration ({saved.dataset}, {saved.label}); "
            "choose another --out directory."
        )
