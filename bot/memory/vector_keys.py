"""The keys of a channel's vectors, from the database, so the vector index can read them by key.

    keys = await vector_keys(db, [3, 9], windows=True)   # {3: ["<session key>:0", ...], 9: None}

A summary vector is keyed by its session, a message window by `<session key>:<index>`, and each embedded session
records how many windows were written with it. Chroma hands over a set of vectors by key several times faster than
by a filter on their channel (1,000,000 messages, a viewer's 22 channels, 720 windows: 27 ms for the vectors by key,
120 ms with their metadata by channel), and that read is what a viewer's first search costs (`VectorCache`). A
channel with a session embedded before window counts were kept maps to None: its windows are read by the channel
filter, as before. The sessions themselves are read by the store (`bot.store.embedded_sessions`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from bot.store.db import Database
from bot.store.embedded_sessions import embedded_sessions


def window_key(session_key: str, index: int) -> str:
    return f"{session_key}:{index}"


VectorKeys = Callable[[list[int]], Awaitable[dict[int, list[str] | None]]]  # channel ids -> keys (None: unknown)


async def vector_keys(db: Database, channel_ids: Sequence[int], *, windows: bool) -> dict[int, list[str] | None]:
    """Every channel's vector keys: its embedded sessions' summary keys, or with `windows` their window keys."""
    keys: dict[int, list[str] | None] = {id_: [] for id_ in channel_ids}
    for channel_id, key, count in await embedded_sessions(db, channel_ids):
        found = keys[channel_id]
        if found is None:
            continue
        if not windows:
            found.append(key)
        elif count is None:
            keys[channel_id] = None
        else:
            found.extend(window_key(key, index) for index in range(count))
    return keys
