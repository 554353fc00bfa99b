"""One write statement shared by many concurrent callers, executed for all of them at once (group commit).

    stages = BatchedWrite(db, update(Ask).where(...).values(...))
    await stages.execute({"ask_id": 7, "new_stage": "searching"})   # returns once a transaction holding it committed

The parameter sets that arrive while a write is in flight go together into the next one (at most `MAX_BATCH` of
them; the rest go into the write after): one transaction, one executemany. A hundred running asks that change stage
in the same instant then take one write transaction of the database instead of a hundred, so the writes an ask waits
on (its turns, its answer) are not queued behind them on SQLite's one write lock. Each caller waits for the write
that carries its parameters and gets that write's error (a write waits for the lock at most the busy timeout).
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import Executable

from bot.store.db import Database


MAX_BATCH = 500  # parameter sets per write: one statement's size stays bounded however many callers queue


class BatchedWrite:
    def __init__(self, db: Database, statement: Executable) -> None:
        self.db = db
        self.statement = statement
        self._queued: list[tuple[dict[str, Any], asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def execute(self, params: dict[str, Any]) -> None:
        """Run the statement with `params`, together with whatever else is queued by then."""
        done = asyncio.get_running_loop().create_future()
        self._queued.append((params, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write_queued())
        # Shielded: a caller that stops waiting does not take the batch's other callers down with it.
        await asyncio.shield(done)

    async def _write_queued(self) -> None:
        while self._queued:
            batch, self._queued = self._queued[:MAX_BATCH], self._queued[MAX_BATCH:]
            try:
                async with self.db.begin() as conn:
                    await conn.execute(self.statement, [params for params, _ in batch])
            except Exception as exc:  # each caller decides what a failed write means to it
                for _, done in batch:
                    _settle(done, exc)
            except BaseException as exc:  # the writer is cancelled (shutdown): nothing queued will be written now
                for _, done in [*batch, *self._queued]:
                    _settle(done, exc)
                self._queued = []
                raise
            else:
                for _, done in batch:
                    _settle(done, None)


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    elif isinstance(error, asyncio.CancelledError):
        done.cancel()
    else:
        done.set_exception(error)
        done.add_done_callback(lambda future: future.exception())  # read here too: its caller may have gone
