"""Finding searched text at rest: every table and every column of the database, read back and scanned for runs of words
taken from the messages a search could return.

    runs = word_runs(message_texts, exclude=[question])     # {"launch date moved", "date moved to", ...}
    found = await text_at_rest(db, runs)                     # [AtRest("turn", "data", 7, "date moved to", 812), ...]
    sum(f.size for f in found)                               # bytes of stored values holding searched text

The schema is reflected from the database itself (not from askwith's models), so a table or column added later is
scanned too. A value is every stored string, and every JSON value as its text; a run is `RUN_WORDS` words in a row
(lower case, punctuation dropped), so a quote cut, re-spaced or re-punctuated by a prompt is still found. Runs that
also occur in `exclude` (the ask's own question, which is the requester's, not a search's) are left out, and so are
messages shorter than a run: too short to tell apart from askwith's own words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import MetaData, select

from bot.store.db import Database


RUN_WORDS = 3
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class AtRest:
    table: str
    column: str
    row: int  # the row's place in its table's scan (the first that holds the run)
    run: str  # the run of words found
    size: int  # bytes of the stored value holding it


def word_runs(texts: Iterable[str], *, exclude: Iterable[str] = ()) -> set[str]:
    """Every run of RUN_WORDS words of `texts`, less the runs found in `exclude`."""
    left_out = {run for text in exclude for run in _runs(text)}
    return {run for text in texts for run in _runs(text)} - left_out


def _runs(text: str) -> set[str]:
    words = _WORD.findall(text.lower())
    return {" ".join(words[i : i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)}


async def text_at_rest(db: Database, runs: set[str]) -> list[AtRest]:
    """Each stored value (table, column, row) that holds one of `runs`, once, with the run it holds."""
    metadata = MetaData()
    async with db.engine.connect() as connection:
        await connection.run_sync(metadata.reflect)
        found: list[AtRest] = []
        for table in metadata.sorted_tables:
            rows = (await connection.execute(select(table))).all()
            for number, row in enumerate(rows):
                for column, value in zip(table.columns.keys(), row, strict=True):
                    if (text := _as_text(value)) and (held := _runs(text) & runs):
                        found.append(AtRest(table.name, column, number, min(held), len(text.encode())))
    return found


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return ""
