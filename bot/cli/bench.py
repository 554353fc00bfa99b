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
    variant: Annotated[
        str,
        typer.Option(
            help="'paper' (default). Schedule: 'per-person' activity lengths (else appendix D.2); FriendsTV: "
            "'find-who-knows' (no question or scene anchor names the people who hold the answers)."
        ),
    ] = "paper",
    compose: Annotated[
        bool | None,
        typer.Option(help="FriendsTV: the model writes the questions (default: when a model is configured)."),
    ] = None,
) -> None:
    """Generate one InformativeBench dataset: workspaces, items and a dataset card."""
    from bot.bench.generate import generate

    settings = Settings.load()
    composer_llm = None
    if dataset == "friendstv" and (compose if compose is not None else settings.llm_configured):
        from bot.asks.runtime import build_llm

        composer_llm = build_llm(settings)
    built = generate(dataset, seed, out_dir, settings, composer_llm=composer_llm, variant=variant)
    summary = f"{built.name}: {len(built.items)} items, {len(built.worlds)} workspace file(s) -> {out_dir}"
    out.print(f"{summary} (card: card.md)", soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.add_typer(bench)
