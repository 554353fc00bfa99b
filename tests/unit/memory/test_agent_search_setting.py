"""Agents search clear memory the way `ASKWITH_AGENT_SEARCH` says: hybrid by default, lexical on request."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.errors import InvalidSettingError
from bot.memory.clear import ClearMemory
from bot.memory.hybrid import HybridMemory
from bot.memory.vector_index import VectorIndex
from bot.memory.wiring import agent_search
from bot.settings import Settings
from bot.store.db import Database


@pytest.mark.parametrize(
    ("search", "windows", "expected"),
    [("hybrid", 3, HybridMemory), ("lexical", 3, ClearMemory), ("hybrid", 0, ClearMemory)],
)
async def test_the_setting_chooses_what_agents_search_with(
    tmp_path: Path, search: str, windows: int, expected: type
) -> None:
    settings = Settings.load().replace(
        data_dir=tmp_path, database_url="", embedder="hash", agent_search=search, window_messages=windows
    )
    db = await Database.open(settings)
    try:
        memory = agent_search(settings, db, VectorIndex.from_settings(settings))
        assert type(memory) is expected
    finally:
        await db.close()


async def test_an_unknown_value_names_the_setting(tmp_path: Path) -> None:
    settings = Settings.load().replace(data_dir=tmp_path, database_url="", embedder="hash", agent_search="fuzzy")
    db = await Database.open(settings)
    try:
        with pytest.raises(InvalidSettingError, match="ASKWITH_AGENT_SEARCH"):
            agent_search(settings, db, VectorIndex.from_settings(settings))
    finally:
        await db.close()
