"""The `askwith bench` command group. Each benchmark's own module adds its command to it with `register(app)`."""

from __future__ import annotations

import typer


bench_app = typer.Typer(name="bench", help="Run the benchmarks.", no_args_is_help=True)


def group(app: typer.Typer) -> typer.Typer:
    """The bench group, attached to `app` the first time it is asked for."""
    if not any(info.typer_instance is bench_app for info in app.registered_groups):
        app.add_typer(bench_app, name="bench")
    return bench_app


def register(app: typer.Typer) -> None:
    group(app)
