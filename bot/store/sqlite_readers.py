"""Reads of a SQLite database in processes of their own, so that searches use more than one core.

One process runs every statement of its event loop on one core, and SQLite's work for a search (ranking a few
thousand full-text matches, say) is most of a search's cost. Under many concurrent asks those statements queue on
that one core. A database in WAL mode lets other processes read while this one writes, so a read that needs nothing
of an open transaction is sent to a reader process instead, over a socket the event loop watches (no thread, so
nothing waits for the interpreter lock), and the loop runs other tasks meanwhile:

    readers = ReaderProcesses("askwith.db", count=1)
    description, rows = await readers.read("SELECT id FROM message WHERE channel_id = ?", (7,))
    readers.close()

Each reader is this file run as a script by the same interpreter: it opens the database with `query_only` on and
answers one statement at a time, rows and all. A reader is started at the first read and replaced at the next
read after it ended. A read its reader never answered raises `ReaderGone`, so the caller can run it itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import pickle
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Sequence
from typing import Any


log = logging.getLogger(__name__)

# A frame: its length, then one pickled tuple. Both ends are this file, on the two ends of a private socket pair.
_LENGTH = struct.Struct("!I")
# Bind parameters a reader can take as they are (the sqlite3 module of either process binds them the same way).
_PLAIN = (int, float, str, bytes, type(None))
CLOSE_WAIT_S = 5.0

Rows = tuple[Any, list[tuple[Any, ...]]]  # (cursor description, every row)


class ReaderGone(Exception):
    """The reader process ended (or could not start) before answering: run the read in this process."""


def plain(parameters: Sequence[Any] | dict[str, Any]) -> bool:
    """Parameters a reader process binds as this process would: numbers, text, bytes and None only."""
    values = parameters.values() if isinstance(parameters, dict) else parameters
    return all(isinstance(value, _PLAIN) for value in values)


class ReaderProcesses:
    """`count` reader processes of the database file at `path`, shared by every connection of one engine."""

    def __init__(self, path: str, count: int) -> None:
        self.path = path
        self.count = count
        self._readers: list[_Reader] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ids = itertools.count(1)

    async def read(self, sql: str, parameters: Sequence[Any] | dict[str, Any]) -> Rows:
        """(description, rows) of one read statement, run whole in a reader process."""
        readers = self._running()
        if not readers:
            raise ReaderGone("no SQLite reader runs")
        reader = min(readers, key=lambda r: len(r.waiting))
        return await reader.read(next(self._ids), sql, parameters)

    def pids(self) -> list[int]:
        """The reader processes running now."""
        return [r.process.pid for r in self._readers if r.alive]

    def pending(self) -> int:
        """Reads sent to a reader and not answered yet."""
        return sum(len(r.waiting) for r in self._readers)

    def close(self) -> None:
        """Stop every reader (each ends at the end of its socket); reads still waiting raise `ReaderGone`."""
        readers, self._readers = self._readers, []
        for reader in readers:
            reader.stop()
        for reader in readers:
            reader.reap()

    def _running(self) -> list[_Reader]:
        # Readers serve one event loop (their tasks and futures live in it); a database opened under one
        # `asyncio.run` may be used by the next, which starts readers of its own.
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self.close()
            self._loop = loop
        for ended in [r for r in self._readers if not r.alive]:
            ended.process.poll()  # reaped if it has exited (a reader ends at the end of its socket)
        self._readers = [r for r in self._readers if r.alive]
        try:
            while len(self._readers) < self.count:
                self._readers.append(_Reader(self.path, loop))
        except ReaderGone as exc:
            if not self._readers:  # none will start: every read stays in this process from now on
                log.warning("%s; reads of %s run in this process", exc, self.path)
                self.count = 0
                raise
        return self._readers


class _Reader:
    def __init__(self, path: str, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                # -P: this file's directory (a package's) does not go on the reader's module path.
                [sys.executable, "-P", __file__, str(theirs.fileno()), path],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
            )
        except (OSError, ValueError) as exc:  # no interpreter to run, or no descriptors to pass on this system
            ours.close()
            raise ReaderGone(f"could not start a SQLite reader: {exc}") from exc
        finally:
            theirs.close()
        ours.setblocking(False)
        self.socket = ours
        self.waiting: dict[int, asyncio.Future[Rows]] = {}
        self.alive = True
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self._tasks = [loop.create_task(self._send()), loop.create_task(self._receive())]

    async def read(self, request_id: int, sql: str, parameters: Sequence[Any] | dict[str, Any]) -> Rows:
        if not self.alive:
            raise ReaderGone("the SQLite reader has ended")
        answer = self.loop.create_future()
        self.waiting[request_id] = answer
        # Queued whole, sent whole by one task: a caller cancelled meanwhile cannot leave half a frame behind.
        self._outbox.put_nowait(_frame((request_id, sql, parameters)))
        try:
            return await answer
        finally:
            self.waiting.pop(request_id, None)

    async def _send(self) -> None:
        try:
            while True:
                await self.loop.sock_sendall(self.socket, await self._outbox.get())
        except OSError as exc:
            self._end(f"could not write to the SQLite reader: {exc}")

    async def _receive(self) -> None:
        try:
            while True:
                (size,) = _LENGTH.unpack(await self._exactly(_LENGTH.size))
                request_id, error, rows = pickle.loads(await self._exactly(size))
                answer = self.waiting.get(request_id)
                if answer is None or answer.done():
                    continue  # its caller stopped waiting
                if error is None:
                    answer.set_result(rows)
                else:
                    answer.set_exception(_sqlite_error(*error))
        except (OSError, EOFError) as exc:
            self._end(f"the SQLite reader ended: {exc}")

    async def _exactly(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = await self.loop.sock_recv(self.socket, size - len(data))
            if not chunk:
                raise EOFError("end of stream")
            data += chunk
        return bytes(data)

    def _end(self, reason: str) -> None:
        if self.alive:
            log.warning("%s; reads run in this process until a new reader starts", reason)
        self.stop()

    def stop(self) -> None:
        self.alive = False
        if not self.loop.is_closed():
            current = asyncio.current_task() if self.loop.is_running() else None
            for task in self._tasks:
                if task is not current:
                    task.cancel()
            for answer in self.waiting.values():
                if not answer.done():
                    answer.set_exception(ReaderGone("the SQLite reader has ended"))
            if (fd := self.socket.fileno()) != -1:
                # Unwatched before it is closed: a later socket given the same number is never unwatched for it.
                self.loop.remove_reader(fd)
                self.loop.remove_writer(fd)
        self.waiting = {}
        self.socket.close()  # the reader reads the end of its socket and exits

    def reap(self) -> None:
        try:
            self.process.wait(CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:  # stuck in a statement: it holds no lock a writer needs, but must go
            self.process.kill()
            self.process.wait()


def _frame(message: tuple[Any, ...]) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


def _sqlite_error(kind: str, message: str, code: int | None, name: str | None) -> sqlite3.Error:
    """The reader's sqlite3 exception as this process's own class (SQLAlchemy maps it as it would any other)."""
    cls = getattr(sqlite3, kind, None)
    error = (cls if isinstance(cls, type) and issubclass(cls, sqlite3.Error) else sqlite3.Error)(message)
    error.sqlite_errorcode, error.sqlite_errorname = code, name  # type: ignore[attr-defined]
    return error


# ---------------------------------------------------------------------- the reader process
def serve(fd: int, path: str) -> None:
    """Answer read statements arriving on socket `fd` until it ends: one at a time, every row."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent decides
    connection = sqlite3.connect(path, timeout=30)
    connection.execute("PRAGMA query_only = ON")
    with socket.socket(fileno=fd) as channel, channel.makefile("rwb") as stream:
        while len(head := stream.read(_LENGTH.size)) == _LENGTH.size:
            request_id, sql, parameters = pickle.loads(stream.read(_LENGTH.unpack(head)[0]))
            try:
                cursor = connection.execute(sql, parameters)
                reply = (request_id, None, (cursor.description, cursor.fetchall() if cursor.description else []))
                cursor.close()
            except sqlite3.Error as exc:
                code, name = getattr(exc, "sqlite_errorcode", None), getattr(exc, "sqlite_errorname", None)
                reply = (request_id, (type(exc).__name__, str(exc), code, name), None)
            stream.write(_frame(reply))
            stream.flush()


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        serve(int(sys.argv[1]), sys.argv[2])
