"""Discord's 3-second rule, as the fake enforces it: an interaction's first response (a message, a deferral, a modal)
must come before any REST call or database statement its handling awaits. Real Discord forgets an interaction not
answered within 3 seconds, and any awaited work may take that long on a busy day; so here, work before the first
response makes the interaction unknown: its callback answers 404/10062 "Unknown interaction", as Discord's would.

The handling is followed by a context variable set while the gateway hands the interaction to discord.py: every
task discord.py starts for it (the command, the button, the modal) inherits it, and so does the work they await.

    with handling(api, token):                      # FakeGateway does this around INTERACTION_CREATE
        client._connection.parse_interaction_create(payload)
    watch_http(client.http)                         # REST calls made while handling are checked
    watch_database(db)                              # and SQL statements
    assert not api.late_interactions                # token -> what ran before the first response
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import discord.http
from sqlalchemy import event

from bot.store.db import Database


if TYPE_CHECKING:
    from tests.fakes.discord_api import FakeDiscordApi

_HANDLING: contextvars.ContextVar[tuple[FakeDiscordApi, str] | None] = contextvars.ContextVar(
    "fake_discord_interaction", default=None
)


@contextlib.contextmanager
def handling(api: FakeDiscordApi, token: str) -> Iterator[None]:
    """Tasks started inside this block handle the interaction `token`."""
    reset = _HANDLING.set((api, token))
    try:
        yield
    finally:
        _HANDLING.reset(reset)


def _io_before_response(what: str) -> None:
    """Work is about to be awaited: too late for an interaction not answered yet (Discord will have forgotten it)."""
    current = _HANDLING.get()
    if current is None:
        return
    api, token = current
    if token in api.acknowledged or token in api.late_interactions:
        return
    if what.endswith(f"/{token}/callback"):
        return  # the first response itself
    api.late_interactions[token] = what
    api.forget_interaction(token)


def watch_http(http: discord.http.HTTPClient) -> None:
    """Check every REST call the client makes (once per client)."""
    if getattr(http, "_fake_deadline", False):
        return
    request = http.request

    async def checked(route: discord.http.Route, **kwargs: Any) -> Any:  # noqa: ANN401 - discord.py's JSON
        _io_before_response(f"{route.method} {route.url}")
        return await request(route, **kwargs)

    http.request = checked  # type: ignore[method-assign]
    http._fake_deadline = True  # type: ignore[attr-defined]


def watch_database(db: Database) -> None:
    """Check every SQL statement run on `db` (once per database)."""
    engine = db.engine.sync_engine
    if not event.contains(engine, "before_cursor_execute", _before_statement):
        event.listen(engine, "before_cursor_execute", _before_statement)


def _before_statement(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:  # noqa: ANN401 - SQLAlchemy's
    _io_before_response("SQL " + statement.split("\n", 1)[0][:80])
