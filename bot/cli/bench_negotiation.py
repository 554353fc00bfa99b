"""`askwith bench negotiation`: the poster's negotiation table, with CSV, JSON and a plot per setting."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bot.cli.bench import bench
from bot.errors import ScenarioError
from bot.llm.client import LLMClient
from bot.llm.provider import open_llm_client
from bot.llm.scripted import ScriptedBackend
from bot.negotiation import messages
from bot.negotiation.bench import ClientsForRun, VariantRuns, format_cell, initial_point, run_variant
from bot.negotiation.model import Scenario
from bot.negotiation.pareto import outcome_space
from bot.negotiation.report import write_csv, write_json, write_plot
from bot.negotiation.scenario import SETTINGS, generate_scenario, load_scenario
from bot.negotiation.scripted import FaultPlan, ScriptedNegotiator
from bot.settings import Settings
from bot.store.db import run


out = Console()
TABLE_WIDTH = 132  # the table has nine columns; narrower consoles would squeeze every cell onto three lines
BASELINES = ("none", "no-utility-prompt", "no-validation", "all")


def negotiation(
    setting: Annotated[str, typer.Option(help="cooperative, competitive or all.")] = "all",
    runs: Annotated[int, typer.Option(min=1, help="Runs per setting and variant.")] = 10,
    baseline: Annotated[
        str, typer.Option(help="Baseline(s) beside the proposed method: " + ", ".join(BASELINES))
    ] = "none",
    scripted: Annotated[
        bool, typer.Option(help="Scripted negotiators instead of the configured LLM (tests, CI).")
    ] = False,
    fault_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Scripted only: share of invalid proposals.")
    ] = 0.2,
    seed: Annotated[int, typer.Option(help="Seed of the generated scenario.")] = 0,
    scenario_file: Annotated[
        Path | None, typer.Option("--scenario", help="A scenario JSON file (one setting).")
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Where to write CSV/JSON/PNG (default: data dir).")
    ] = None,
) -> None:
    """Run the negotiation bench and print Agreement, Error, Turns, u_A, u_B, SW and L2 to Pareto."""
    settings = Settings.load()
    variants = _variants(baseline)
    target = out_dir or settings.data_dir / "bench" / "negotiation"
    target.mkdir(parents=True, exist_ok=True)
    if scripted:
        out.print(f"[yellow]{messages.SCRIPTED_NOTICE}[/yellow]")
    for scenario in _scenarios(setting, seed, scenario_file):
        clients = nullcontext(_scripted_clients(fault_rate)) if scripted else _llm_clients(settings)
        batches = run(_run_all(scenario, variants, runs, clients))
        space = outcome_space(scenario)
        Console(width=max(out.width, TABLE_WIDTH)).print(_table(scenario, batches, scripted))
        stem = target / f"negotiation-{scenario.setting}"
        meta = {"scripted": scripted, "fault_rate": fault_rate if scripted else None, "runs": runs}
        write_csv(stem.with_suffix(".csv"), batches)
        write_json(stem.with_suffix(".json"), scenario, space, batches, meta)
        label = "scripted negotiators" if scripted else settings.llm_model
        write_plot(stem.with_suffix(".png"), scenario, space, batches, f"{scenario.id} ({label})")
        out.print(f"wrote {stem}.csv, .json, .png")


async def _run_all(
    scenario: Scenario, variants: list[str], runs: int, clients: AbstractAsyncContextManager[ClientsForRun]
) -> list[VariantRuns]:
    space = outcome_space(scenario)
    async with clients as clients_for_run:
        return [await run_variant(scenario, v, runs, clients_for_run, space=space) for v in variants]


def _variants(baseline: str) -> list[str]:
    if baseline not in BASELINES:
        raise typer.BadParameter(f"--baseline must be one of {', '.join(BASELINES)}")
    if baseline == "all":
        return ["proposed", "no-utility-prompt", "no-validation"]
    return ["proposed"] if baseline == "none" else ["proposed", baseline]


def _scenarios(setting: str, seed: int, scenario_file: Path | None) -> list[Scenario]:
    if scenario_file is not None:
        return [load_scenario(scenario_file)]
    if setting != "all" and setting not in SETTINGS:
        raise ScenarioError(f"Unknown setting {setting!r}; expected cooperative, competitive or all.")
    return [generate_scenario(s, seed) for s in (SETTINGS if setting == "all" else (setting,))]


def _scripted_clients(fault_rate: float) -> ClientsForRun:
    def clients(scenario: Scenario, run_index: int) -> dict[str, LLMClient]:
        faults = FaultPlan(rate=fault_rate)
        return {
            agent: LLMClient(ScriptedBackend(ScriptedNegotiator(scenario, agent, faults=faults, seed=run_index)))
            for agent in scenario.agents
        }

    return clients


@asynccontextmanager
async def _llm_clients(settings: Settings) -> AsyncIterator[ClientsForRun]:
    # One client (and, with ASKWITH_LOCAL_LLM, one local server) for every run of the scenario.
    async with open_llm_client(settings) as client:
        yield lambda scenario, _run: {agent: client for agent in scenario.agents}


def _table(scenario: Scenario, batches: list[VariantRuns], scripted: bool) -> Table:
    first, second = scenario.agents
    title = f"{scenario.setting.capitalize()} — scenario {scenario.id}" + (" — SCRIPTED" if scripted else "")
    table = Table(title=title)
    for column in ("Setting", "Agreement", "Error", "Turns", f"u_{first}", f"u_{second}", "SW", "L2 to Pareto"):
        table.add_column(column)
    for batch in batches:
        s = batch.summary()
        table.add_row(
            batch.variant,
            format_cell(s["agreement_pct"], percent=True),
            format_cell(s["error_pct"], percent=True),
            format_cell(s["turns"], digits=1),
            *(format_cell(s[m]) for m in ("u_a", "u_b", "sw")),
            format_cell(s["l2"], digits=3),
        )
    start = initial_point(scenario, outcome_space(scenario))
    cells = (f"{start['u_a']:.2f}", f"{start['u_b']:.2f}", f"{start['sw']:.2f}", f"{start['l2']:.3f}")
    table.add_row("initial", "", "", "", *cells)
    return table


def register(app: typer.Typer) -> None:
    # The `bench` group itself is attached to the app by bot.cli.bench.
    if not any(info.name == "negotiation" for info in bench.registered_commands):
        bench.command("negotiation")(negotiation)
