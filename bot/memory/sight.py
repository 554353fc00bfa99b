"""One reading of what a viewer can see, shared by the searches of one batch, with the rankings they computed on it.

    sight = Sight(await history.channels(viewer))       # channel id -> memory version, read once for an agent's turn
    hits = await memory.clear.search(viewer, query, visible=sight)
    rows = await sight.shared(key, run_statement)         # a second search asking the same statement awaits the first

The searches of an agent's turn run side by side and agree on one reading of the member's channels. Two of them often
run the very same full-text statement (a keyword search and a question's best messages read the same words), and
that statement is most of a search's cost, so its rows are computed once per reading. The reading holds them only as
long as it lives (one turn): the next turn reads the member's channels again and searches again, so a channel the
member excluded meanwhile, or a message that arrived, is seen there. Every statement is scoped to the viewer in SQL,
and the key names the viewer, so a shared result is exactly what each search would have read itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, TypeVar


T = TypeVar("T")


class Sight(dict[int, int]):
    """The channels a viewer can see (id -> memory version), read once, and the statements' rows computed on it."""

    def __init__(self, versions: Mapping[int, int]) -> None:
        super().__init__(versions)
        self._shared: dict[Hashable, asyncio.Future[Any]] = {}

    async def shared(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> T:
        """What `compute` returns, computed by the first caller with this `key`; later callers (and those waiting
        meanwhile) get the same value, or the same error."""
        if (found := self._shared.get(key)) is None:
            found = self._shared[key] = asyncio.ensure_future(compute())
        # One caller cancelled (its turn timed out) must not cancel the statement another caller awaits.
        return await asyncio.shield(found)


async def shared(visible: Mapping[int, int] | None, key: Hashable, compute: Callable[[], Awaitable[T]]) -> T:
    """`compute()`, shared through `visible` when it is a `Sight`; run as is when the caller read no sight."""
    if isinstance(visible, Sight):
        return await visible.shared(key, compute)
    return await compute()
