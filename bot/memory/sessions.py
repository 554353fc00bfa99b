"""Sessions: the unit of fuzzy memory. Pure functions, no I/O.

A session is a run of messages in one channel, oldest first, that ends where the channel falls silent for longer
than a gap or where it reaches a maximum size:

    runs = split_sessions(messages, gap=timedelta(minutes=30), max_messages=40)

A line and a span are the store's records (`bot.store.memory_sessions`), used here as they are.

Splitting is greedy from the channel's first message, so new messages appended to a channel change at most its last
session; every earlier session keeps its key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import timedelta

from bot.store.memory_sessions import SessionLine, SessionSpan


def split_sessions(lines: Sequence[SessionLine], *, gap: timedelta, max_messages: int) -> list[list[SessionLine]]:
    """Cut one channel's messages (oldest first) into sessions at silences longer than `gap` and every
    `max_messages` messages."""
    if max_messages < 1:
        raise ValueError("max_messages must be at least 1")
    runs: list[list[SessionLine]] = []
    for line in lines:
        current = runs[-1] if runs else None
        if current is None or len(current) >= max_messages or line.ts - current[-1].ts > gap:
            runs.append([line])
        else:
            current.append(line)
    return runs


def session_key(channel_id: int, message_ids: Iterable[int]) -> str:
    """Deterministic identity of a session: its channel and exactly its messages (any change = a new session)."""
    material = f"{channel_id}:" + ",".join(str(m) for m in message_ids)
    return hashlib.sha256(material.encode()).hexdigest()


def content_hash(lines: Iterable[SessionLine]) -> str:
    """Hash of what a session says (sender and text of each line), whatever channel or time it happened in:
    identical content is summarized once."""
    digest = hashlib.sha256()
    for line in lines:
        # Unit/record separators cannot be confused with chat text, so two different line splits never collide.
        digest.update(f"{line.sender}\x1f{line.text}\x1e".encode())
    return digest.hexdigest()


def sessionize(
    channel_id: int, lines: Sequence[SessionLine], *, gap: timedelta, max_messages: int
) -> list[SessionSpan]:
    """One channel's sessions with their keys and content hashes."""
    return [
        SessionSpan(
            channel_id=channel_id,
            lines=tuple(run),
            key=session_key(channel_id, (line.message_id for line in run)),
            content_hash=content_hash(run),
        )
        for run in split_sessions(lines, gap=gap, max_messages=max_messages)
    ]


def windows(lines: Sequence[SessionLine], size: int) -> list[tuple[SessionLine, ...]]:
    """A session's lines cut into consecutive windows of `size` (the last may be shorter): what hybrid retrieval
    embeds, so a question finds the answer that sits next to the words it shares with the question."""
    if size < 1:
        return []
    return [tuple(lines[start : start + size]) for start in range(0, len(lines), size)]
