"""A TCP proxy on 127.0.0.1 that can play a server restart to its clients: every connection cut, then refused for a
while, then accepted again.

    proxy = TcpProxy("127.0.0.1", 5432)
    await proxy.start()                      # listens on proxy.port (a free one)
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{proxy.port}/askwith"
    await proxy.restart(down_s=2.0)          # as PostgreSQL restarting looks from the client's side
    await proxy.stop()

While down, the listening socket is closed, so a client connecting meets "connection refused", as it would with no
server on the port; then the proxy listens on the same port again. It runs on the caller's event loop: a test waiting
on a subprocess polls (never blocks the loop) so the proxy keeps forwarding meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib


CHUNK = 64 * 1024


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0  # chosen at start, then kept across restarts
        self.connections = 0  # client connections accepted so far
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port, reuse_address=True)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Stop listening and cut every proxied connection."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()  # a reset, like a server process that went away
        for pipe in list(self._pipes):
            pipe.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    async def restart(self, *, down_s: float) -> None:
        """Cut every connection, refuse new ones for `down_s` seconds, then accept again on the same port."""
        await self.stop()
        await asyncio.sleep(down_s)
        await self.start()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, upstream_writer))
        pipes = [
            asyncio.create_task(self._pipe(reader, upstream_writer)),
            asyncio.create_task(self._pipe(upstream_reader, writer)),
        ]
        self._pipes.update(pipes)
        try:  # either side closing ends both directions
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pipe in pipes:
                pipe.cancel()
            await asyncio.gather(*pipes, return_exceptions=True)
            self._pipes.difference_update(pipes)
            for end in (writer, upstream_writer):
                self._writers.discard(end)
                end.transport.abort()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(CHUNK):
                writer.write(data)
                await writer.drain()
