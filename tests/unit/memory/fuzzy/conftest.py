"""Fixtures for fuzzy memory: a vector index over embedded Chroma and over a Chroma server started for the run."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bot.memory.embeddings import HashEmbedder
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings


SERVER_START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ChromaServer:
    host: str
    port: int


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _chroma_cli() -> str:
    beside_python = Path(sys.executable).parent / "chroma"
    found = str(beside_python) if beside_python.exists() else shutil.which("chroma")
    if found is None:
        pytest.fail("the chroma CLI (installed with chromadb) was not found")
    return found


def _wait_for_heartbeat(process: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"chroma server exited early with code {process.returncode}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail(f"chroma server gave no heartbeat at {url} within {SERVER_START_TIMEOUT_S:.0f} s")


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """A real Chroma server (`chroma run`) on a free port, for the whole test run."""
    port = _free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    process = subprocess.Popen(
        [_chroma_cli(), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_heartbeat(process, f"http://127.0.0.1:{port}/api/v2/heartbeat")
        yield ChromaServer("127.0.0.1", port)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.chroma_server)])
def chroma_settings(request: pytest.FixtureRequest, settings: Settings) -> Settings:
    """Settings for embedded Chroma, then for the Chroma server (a fresh collection prefix per test)."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    if request.param == "embedded":
        return settings.replace(chroma_prefix=prefix)
    server: ChromaServer = request.getfixturevalue("chroma_server")
    return settings.replace(chroma_host=server.host, chroma_port=server.port, chroma_prefix=prefix)


@pytest.fixture
def vector_index(chroma_settings: Settings) -> VectorIndex:
    return VectorIndex.from_settings(chroma_settings, embedder=HashEmbedder())
