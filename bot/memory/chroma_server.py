"""A Chroma server as fuzzy memory's vector store: its network failures become one error and one log line.

    server = ChromaServer("chroma.internal", 8000)
    index = VectorIndex(server.connect, embedder, server=server)
    await server.call(blocking_fn, arg)   # MemoryUnavailableError while the server cannot be reached

Chroma's HTTP client raises `httpx` errors (or, while connecting, a `ValueError` over one) when its server is down;
here they become `MemoryUnavailableError`, which a search records as failed instead of crashing the ask. The first
failure after a success logs one warning naming the server, its return one info line. Nothing is kept across the
outage: the client reconnects by itself, and a client that never connected is made again at the next call.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import chromadb
import httpx
from chromadb.api import ClientAPI
from chromadb.config import Settings as ChromaSettings

from bot.errors import MemoryUnavailableError


log = logging.getLogger(__name__)

T = TypeVar("T")

GATEWAY_ERRORS = (502, 503, 504)  # what a proxy in front of a stopped server answers


class ChromaServer:
    def __init__(self, host: str, port: int, settings: ChromaSettings | None = None) -> None:
        self.address = f"{host}:{port}"
        self.host, self.port = host, port
        self.settings = settings or ChromaSettings(anonymized_telemetry=False)
        self.down = False
        self._lock = threading.Lock()

    def connect(self) -> ClientAPI:
        """A client of the server (blocking: it checks the server answers)."""
        return chromadb.HttpClient(host=self.host, port=self.port, settings=self.settings)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in a worker thread; MemoryUnavailableError when the server cannot be reached."""
        try:
            result = await asyncio.to_thread(fn, *args)
        except Exception as exc:
            if (cause := _network_cause(exc)) is None:
                raise
            raise self._failed(cause) from exc
        if self.down:
            self._answered()
        return result

    def _failed(self, cause: BaseException) -> MemoryUnavailableError:
        detail = f"Chroma server {self.address}: {type(cause).__name__}: {cause}"
        with self._lock:
            first, self.down = not self.down, True
        if first:
            log.warning("fuzzy memory unavailable, searches fail until it answers: %s", detail)
        return MemoryUnavailableError(detail)

    def _answered(self) -> None:
        with self._lock:
            back, self.down = self.down, False
        if back:
            log.info("Chroma server %s answers again: fuzzy memory is back", self.address)


def _network_cause(exc: BaseException) -> BaseException | None:
    """The network failure behind `exc` (itself or what it was raised over), if there is one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, httpx.TransportError):
            return current
        if isinstance(current, httpx.HTTPStatusError) and current.response.status_code in GATEWAY_ERRORS:
            return current
        current = current.__cause__ or current.__context__
    return None
