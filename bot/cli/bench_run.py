"""`askwith bench run` and `askwith bench report`: replay InformativeBench items through askwith, then tabulate.

askwith bench run --dataset np --limit 20 --concurrency 4           # generates the dataset first if needed
askwith bench run --dataset DIR --ablation no-infonav --out RUN_DIR  # resumable: rerun to continue
askwith bench run --dataset friendstv --split dev                    # only the items of one split
askwith bench report [RUN_DIR ...] [--split test|dev|all]            # tables, CSV/JSON, PNG plots (default: test)
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from bot.agents.ablations import NAMES
from bot.asks.runtime import build_llm, build_private_llm
from bot.bench.floors import dataset_floors
from bot.bench.generate import generate
from bot.bench.report import build_report, find_runs, load_runs, select_split
from bot.bench.report_files import write_report_files
from bot.bench.report_tables import SCRIPTED_NOTE, report_tables
from bot.bench.results import ItemResult, ResultStore
from bot.bench.run_config import RunConfig, bench_root, default_run_dir, resolve_dataset
from bot.bench.runner import RunState, run_bench
from bot.bench.splits import ALL, CHOICES, TEST, TEST_SEEDS_FROM, check_choice, describe
from bot.cli.bench import bench
from bot.cli.bench_report_view import rich_tables
from bot.cli.ingest import STAGE_LABELS
from bot.errors import BenchError
from bot.llm.client import LLMClient
from bot.settings import Settings
from bot.store.db import run
from memory_ingest.report import Stage


SPLIT_HELP = (
    f"Items of one split: test, dev or all. FriendsTV splits by scene; NP and Schedule by seed (test from "
    f"--seed {TEST_SEEDS_FROM}). Tune on dev; quote test."
)
DATASET_HELP = "A dataset directory, or a name (schedule-easy|schedule-medium|schedule-hard|np|friendstv)."

JUDGE_IS_MODEL_UNDER_TEST = (
    "Warning: the judge ({model}) is the model under test; it grades its own answers. The paper judged with GPT-4: "
    "pass --judge-model or set ASKWITH_BENCH_JUDGE_MODEL to another model."
)

out = Console()


def run_command(
    dataset: Annotated[str, typer.Option("--dataset", help=DATASET_HELP)],
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N items.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Items asked at once.")] = 1,
    ablation: Annotated[list[str] | None, typer.Option(help=f"Switch a mechanism off: {', '.join(NAMES)}.")] = None,
    scripted: Annotated[bool, typer.Option(help="The deterministic stand-in plays the model (not quality).")] = False,
    judge: Annotated[bool, typer.Option(help="NP/FriendsTV: LLM judge (else token F1 / concise match).")] = True,
    judge_model: Annotated[
        str | None, typer.Option(help="Judge model on the same endpoint (default: ASKWITH_BENCH_JUDGE_MODEL).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed when generating a dataset by name.")] = 0,
    run_dir: Annotated[Path | None, typer.Option("--out", help="Run directory (default: one per config).")] = None,
    variant: Annotated[
        str, typer.Option(help="Schedule: 'paper' (default) or 'per-person' lengths; FriendsTV: 'find-who-knows'.")
    ] = "paper",
    split: Annotated[str, typer.Option(help=SPLIT_HELP)] = ALL,
    anonymize_names: Annotated[
        bool, typer.Option(help="FriendsTV: rename the main characters (paper 6.4, prior knowledge).")
    ] = False,
    privacy_prompt: Annotated[
        bool, typer.Option(help="Tell agents to protect private information (paper 6.4).")
    ] = False,
) -> None:
    """Ask every item of a dataset through askwith and score it (resumable: finished items are skipped)."""
    settings = Settings.load()
    llm = build_llm(settings, scripted=scripted)  # no model and no --scripted: one clear line, before any work
    private_llm = build_private_llm(settings, scripted=scripted)
    dataset_dir = _dataset(dataset, seed, settings, variant)
    judge_client = _judge(settings, llm, scripted=scripted, wanted=judge, model=judge_model)
    config = RunConfig.for_run(
        dataset_dir, model=llm.model, scripted=scripted, ablations=[*settings.ablations.split(","), *(ablation or [])],
        judge=judge_client.model if judge_client else None, anonymize_names=anonymize_names,
        privacy_prompt=privacy_prompt,
    )  # fmt: skip
    if anonymize_names and config.dataset != "friendstv":
        raise BenchError("--anonymize-names renames FriendsTV's characters; it applies to --dataset friendstv only.")
    run_dir = run_dir or default_run_dir(config, settings)
    if scripted:
        out.print(f"[yellow]{SCRIPTED_NOTE}[/yellow]")
    with _display(config) as display:
        state = run(
            run_bench(
                config,
                run_dir,
                settings=settings,
                llm=llm,
                judge=judge_client,
                limit=limit,
                split=check_choice(split),
                concurrency=concurrency,
                on_item=display.on_item,
                on_ingest=display.on_ingest,
                private_llm=private_llm,
            )  # fmt: skip
        )
    out.print(_summary(config, state, run_dir), soft_wrap=True)


def _dataset(spec: str, seed: int, settings: Settings, variant: str = "paper") -> Path:
    directory, missing = resolve_dataset(spec, seed=seed, settings=settings, variant=variant)
    if missing:
        built = generate(spec, seed, directory, settings, variant=variant)
        out.print(f"generated {built.name} (seed {seed}): {len(built.items)} items -> {directory}", soft_wrap=True)
    return directory


def _judge(settings: Settings, llm: LLMClient, *, scripted: bool, wanted: bool, model: str | None) -> LLMClient | None:
    if scripted or not wanted:
        return None  # the stand-in cannot judge; every dataset falls back to rule-based extraction and matching
    model = model or settings.bench_judge_model
    if model == llm.model:
        out.print(f"[yellow]{JUDGE_IS_MODEL_UNDER_TEST.format(model=model)}[/yellow]", soft_wrap=True)
        return llm
    return build_llm(settings.replace(llm_model=model))


class _Display:
    """A progress bar of items with the running score, and one line for the ingestion of the current workspace."""

    def __init__(self, bar: Progress, config: RunConfig) -> None:
        self.bar = bar
        self.items = bar.add_task(f"{config.dataset} · {config.label}", total=None, score="")
        self.ingest: TaskID | None = None

    def on_item(self, state: RunState, result: ItemResult | None) -> None:
        mean = state.mean_score
        score = f"score {mean:.1%} over {state.done}" if mean is not None else ""
        self.bar.update(self.items, total=state.total, completed=state.done + state.retry_later, score=score)

    def on_ingest(self, world_file: str, stage: Stage, done: int, total: int) -> None:
        if self.ingest is None:
            self.ingest = self.bar.add_task("", total=None, score="")
        label = f"ingesting {Path(world_file).stem}: {STAGE_LABELS[stage].lower()}"
        self.bar.update(self.ingest, description=label, completed=done, total=total or None)


@contextmanager
def _display(config: RunConfig) -> Iterator[_Display]:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[score]}"))  # fmt: skip
    # Each workspace's ingestion would log a line; with a hundred small workspaces that buries the progress bar.
    quiet = [logging.getLogger(name) for name in ("memory_ingest", "alembic")]
    levels = [logger.level for logger in quiet]
    for logger in quiet:
        logger.setLevel(logging.WARNING)
    try:
        with Progress(*columns, console=Console(stderr=True)) as bar:
            yield _Display(bar, config)
    finally:
        for logger, level in zip(quiet, levels, strict=True):
            logger.setLevel(level)


def _summary(config: RunConfig, state: RunState, run_dir: Path) -> str:
    mean = "-" if state.mean_score is None else f"{state.mean_score:.2%}"
    parts = [f"{config.dataset} · {config.label}: {state.done}/{state.total} items scored, mean {mean}"]
    scored = ResultStore(run_dir).done_ids()
    if scored:
        floors = dataset_floors(Path(config.dataset_dir), frozenset(scored))
        parts[0] += f" (best no-communication floor over the same items: {floors.best:.2%})"
    if state.skipped:
        parts.append(f"{state.skipped} from an earlier run")
    if state.retry_later:
        parts.append(f"{state.retry_later} left for a rerun (the model did not respond)")
    parts.append(f"results in {run_dir}; tables: askwith bench report {run_dir}")
    return "; ".join(parts)


def report_command(
    run_dirs: Annotated[list[Path] | None, typer.Argument(help="Run directories (default: every run).")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Where to write CSV, JSON and PNG.")] = None,
    split: Annotated[str, typer.Option(help=SPLIT_HELP)] = TEST,
) -> None:
    """Print Table 1 (scores), Table 3 (InfoNav behaviour) and cost per item; write CSV/JSON and PNG plots."""
    settings = Settings.load()
    roots = run_dirs or [bench_root(settings) / "runs"]
    found = find_runs(roots)
    if not found:
        raise BenchError(f"No benchmark runs in {', '.join(map(str, roots))}; run `askwith bench run` first.")
    runs = select_split(load_runs(found), check_choice(split))
    if not any(run.results for run in runs):
        others = ", ".join(c for c in CHOICES if c != split)
        raise BenchError(f"No results of {split} items in these runs; {describe(split)} Try --split {others}.")
    report = build_report(runs, split=split)
    out.print(describe(split), soft_wrap=True)
    if report.scripted:
        out.print(f"[yellow]{SCRIPTED_NOTE}[/yellow]")
    for table in report_tables(report):
        for piece in rich_tables(table, out.width):
            out.print(piece)
    written = write_report_files(report, runs, out_dir or bench_root(settings) / "report")
    out.print("wrote " + ", ".join(str(p) for p in written), soft_wrap=True)


def register(app: typer.Typer) -> None:
    # The `bench` group itself is attached to the app by bot.cli.bench.
    names = {info.name for info in bench.registered_commands}
    if "run" not in names:
        bench.command("run")(run_command)
    if "report" not in names:
        bench.command("report")(report_command)
