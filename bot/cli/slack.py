"""`askwith slack …`: helpers for setting up the Slack app (the app itself runs inside `askwith serve`)."""

from __future__ import annotations

import typer

from bot.store.user_tokens import TokenCipher


def register(app: typer.Typer) -> None:
    slack = typer.Typer(help="Slack app set-up helpers.", no_args_is_help=True)

    @slack.command("new-key")
    def new_key() -> None:
        """Print a fresh ASKWITH_TOKEN_ENCRYPTION_KEY (encrypts members' Slack tokens at rest)."""
        typer.echo(f"ASKWITH_TOKEN_ENCRYPTION_KEY={TokenCipher.new_key()}")

    app.add_typer(slack, name="slack")
