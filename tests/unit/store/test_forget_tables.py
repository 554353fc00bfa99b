"""The deletion of a workspace finds its tables from the models: every table is tied to a workspace or named as
holding none, and a table that is neither stops it (so a new table cannot be forgotten silently)."""

from __future__ import annotations

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, Text

from bot.asks import forget
from bot.errors import UnscopedTableError
from bot.store import models


def test_every_table_is_tied_to_a_workspace_or_named_as_holding_none() -> None:
    scoped = {t.name for t in forget.workspace_tables()}
    every = {t.name for t in models.Base.metadata.sorted_tables}
    assert scoped | set(forget.NOT_WORKSPACE_DATA) == every
    assert {"message", "message_tombstone", "memory_session", "session_message", "user_token", "ask", "turn"} <= scoped


def test_a_table_tied_to_no_workspace_stops_the_deletion(monkeypatch: pytest.MonkeyPatch) -> None:
    metadata = MetaData()
    for table in models.Base.metadata.sorted_tables:
        table.to_metadata(metadata)
    Table("stray_notes", metadata, Column("id", Integer, primary_key=True), Column("text", Text))
    monkeypatch.setattr(forget.models.Base, "metadata", metadata)
    with pytest.raises(UnscopedTableError, match="stray_notes"):
        forget.workspace_tables()
