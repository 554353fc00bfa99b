"""SQLite write transactions of one process take turns in the event loop, not in SQLite's busy handler.

SQLite lets one connection write at a time. A second writer is put to sleep by its busy handler and retries with
sleeps that grow to 100 ms, so under many concurrent asks a write that could start at once waits for the end of a
sleep, and the longest-waiting writers sleep longest. Here a write transaction first waits its turn on an asyncio
lock (first come, first served, woken the moment the previous writer commits), then begins:

    turns = WriteTurns()
    async with turns.turn():          # queued behind the process's other writers
        ...                           # one write transaction

A transaction opened while its task already holds the turn does not wait again, nor does one in a task started
inside a turn (it inherits the turn's context; SQLite's busy handler orders it, as before). A turn not granted
within `wait_s` is given up: the transaction then goes to SQLite as before (its busy timeout still applies), so a
writer waiting on another task's write can never deadlock here. Other processes (the ingestion worker) still meet
this process in SQLite's busy handler.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from contextvars import ContextVar
from types import TracebackType
from typing import Any


TURN_WAIT_S = 5.0
# The turns the running task (and the tasks it started) holds: a module-level variable, as contextvars should be.
_HELD: ContextVar[tuple[WriteTurns, ...]] = ContextVar("write_turns_held", default=())


class WriteTurns:
    def __init__(self, *, wait_s: float = TURN_WAIT_S) -> None:
        self.wait_s = wait_s
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        held = _HELD.get()
        lock = self._lock_here()
        granted = False
        if self not in held:
            try:
                granted = await asyncio.wait_for(lock.acquire(), self.wait_s)
            except TimeoutError:
                pass  # SQLite's own busy handling decides, as without turns
        if not granted:
            yield
            return
        token = _HELD.set((*held, self))
        try:
            yield
        finally:
            _HELD.reset(token)
            lock.release()

    def _lock_here(self) -> asyncio.Lock:
        # A lock serves one event loop; a database opened by one `asyncio.run` may be used by the next.
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._lock, self._loop = asyncio.Lock(), loop
        return self._lock


def in_turn(turns: WriteTurns | None, transaction: Any) -> Any:  # noqa: ANN401 - the transaction's own type
    """`transaction` (a session's or connection's `begin()`) entered once this task has the turn, or as it is when
    there are no turns to take (PostgreSQL)."""
    return transaction if turns is None else TurnTakingTransaction(turns, transaction)


class TurnTakingTransaction:
    def __init__(self, turns: WriteTurns, transaction: Any) -> None:
        self._turns = turns
        self._transaction = transaction
        self._exit: AsyncExitStack | None = None

    async def __aenter__(self) -> Any:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self._turns.turn())
            entered = await stack.enter_async_context(self._transaction)
            self._exit = stack.pop_all()
        return entered

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> bool | None:
        assert self._exit is not None, "exited before it was entered"
        return await self._exit.__aexit__(kind, error, trace)
