"""Sending a large body the way an attacker would: bytes straight onto a loopback socket, stopping as soon as the
server answers (or after `total` bytes), so a test measures what the server read without holding the body itself."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from urllib.parse import urlsplit


CHUNK = b"A" * 65536


@dataclass
class RawResult:
    status: int | None  # None: the server closed without answering
    sent: int  # body bytes written before the answer came (or all of them)
    head: str


async def post_stream(
    url: str, path: str, total: int, *, declare_length: bool, headers: dict[str, str] | None = None,
    timeout_s: float = 120.0,
) -> RawResult:  # fmt: skip
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    head = [f"POST {path} HTTP/1.1", f"Host: {parts.netloc}", "Content-Type: application/x-www-form-urlencoded"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    head.append(f"Content-Length: {total}" if declare_length else "Transfer-Encoding: chunked")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
    sent = 0

    async def write_body() -> None:
        nonlocal sent
        while sent < total:
            chunk = CHUNK[: min(len(CHUNK), total - sent)]
            writer.write(chunk if declare_length else b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
            sent += len(chunk)
            # drain() does not yield while the socket takes the data: yield, so the answer is seen as it arrives
            await asyncio.sleep(0)
        if not declare_length:
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    writing = asyncio.create_task(write_body())
    try:
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout_s)
    except (asyncio.IncompleteReadError, ConnectionError):
        answer = b""
    finally:
        writing.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await writing
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    text = answer.decode("latin-1")
    status = int(text.split()[1]) if text.startswith("HTTP/") else None
    return RawResult(status, sent, text)
