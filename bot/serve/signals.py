"""SIGINT / SIGTERM as a request to stop: the long-running processes shut down in order instead of being cut off."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_on_signals(stop: Callable[[int], None]) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM call `stop(signal number)` on the running loop (outside the main thread,
    where no handler can be installed, the default handling stays)."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    for sig in STOP_SIGNALS:
        try:
            loop.add_signal_handler(sig, stop, sig)
        except (ValueError, RuntimeError, NotImplementedError):
            continue
        installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
