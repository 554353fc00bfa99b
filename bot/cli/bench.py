"""`askwith bench ...`: InformativeBench datasets (more commands join this group as they land)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from bot.settings import Settings


bench = typer.Typer(name="bench", help="InformativeBench: generate datasets, run them, report.", no_args_is_help=True)
out = Console()


@bench.command("generate")
def generate_command(
    dataset: Annotated[
        str, typer.Option("--dataset", help="schedule-easy | schedule-medium | schedule-hard | np | friendstv")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Dataset directory to write (new, empty, or a dataset).")],
    seed: Annotated[int, typer.Option("--seed", help="Same seed, byte-identical files.")] = 0,
) -> None:
    """Generate one InformativeBench dataset: workspaces, items and a dataset card."""
    from bot.bench.generate import generate

    built = generate(dataset, seed, out_dir, Settings.load())
    summary = f"{built.name}: {len(built.items)} items, {len(built.worlds)} workspace file(s) -> {out_dir}"
    out.print(f"{summary} (card: card.md)", soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.add_typer(bench)
