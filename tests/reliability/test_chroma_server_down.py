"""The Chroma server down: searches fail with one clear line, the ask tells the requester in plain words (nothing about
the server in it), and searches work again once the server is back."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.asks.requests import AskOutcome
from bot.asks.service import AskRequest
from bot.errors import MemoryUnavailableError
from bot.memory.embeddings import HashEmbedder
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorDoc, VectorIndex
from bot.settings import Settings
from bot.store.db import Database
from bot.texts import failure_texts
from tests.fakes import asks
from tests.fakes.asks import QUESTION, build, two_fact_world
from tests.unit.memory.fuzzy.conftest import _chroma_cli, _free_port, _wait_for_heartbeat


async def _ask_with_the_server_down(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch, question: str
) -> AskOutcome:
    """The world indexed while the store answered (embedded Chroma), then asked with the index on a Chroma server
    at a local port where nothing listens."""
    down = settings.replace(whole_history=False, embedder="hash", chroma_host="127.0.0.1", chroma_port=_free_port())

    async def indexed_then_down(db: Database, _settings: Settings, workspace_id: int) -> FuzzyMemory:
        up = down.replace(chroma_host="")
        await SessionIndexer(db, up, SessionSummarizer(db, None), VectorIndex.from_settings(up)).update(workspace_id)
        return FuzzyMemory(db, VectorIndex.from_settings(down))

    monkeypatch.setattr(asks, "_fuzzy", indexed_then_down)
    h = await build(db, two_fact_world(), settings=down, fuzzy=True)
    return await h.service.ask(AskRequest("alice", ["bob"], question))


def _nothing_about_the_server(text: str) -> None:
    for private in ("127.0.0.1", "Chroma", "ConnectError", "refused", "Traceback", "something went wrong"):
        assert private not in text, text


async def test_an_answer_found_without_meaning_search_says_it_may_miss_something(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        outcome = await _ask_with_the_server_down(db, settings, monkeypatch, QUESTION)
    assert outcome.status == "done" and "14 March" in (outcome.answer or ""), outcome.final_text
    assert outcome.final_text.startswith(failure_texts.memory_unavailable_note())
    _nothing_about_the_server(outcome.final_text)
    fuzzy = [q for c in outcome.result.conversations for t in c.turns for q in t.queries if q.kind == "fuzzy"]
    assert fuzzy and all(q.error == MemoryUnavailableError.MESSAGE for q in fuzzy)
    # One clear line for whoever runs askwith, naming the server; no traceback.
    down = [r for r in caplog.records if r.name == "bot.memory.chroma_server"]
    assert len(down) == 1 and down[0].levelno == logging.WARNING and "127.0.0.1" in down[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]


async def test_an_ask_nothing_else_answers_says_memory_search_is_down(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = await _ask_with_the_server_down(db, settings, monkeypatch, "Who waters the office ficus on Sundays?")
    assert outcome.status == "failed" and outcome.failure == failure_texts.failure_memory_unavailable()
    assert failure_texts.failure_memory_unavailable() in outcome.final_text
    _nothing_about_the_server(outcome.final_text)


@pytest.fixture
def server_port() -> int:
    return _free_port()


class _Server:
    """`chroma run` on one port and one directory, stopped and started again by the test."""

    def __init__(self, port: int, path: Path) -> None:
        self.port, self.path = port, path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [_chroma_cli(), "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_heartbeat(self.process, f"http://127.0.0.1:{self.port}/api/v2/heartbeat")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


@pytest.fixture
def server(tmp_path: Path, server_port: int) -> Iterator[_Server]:
    running = _Server(server_port, tmp_path / "chroma-server")
    try:
        yield running
    finally:
        running.stop()


@pytest.mark.chroma_server
async def test_searches_work_again_when_the_server_returns(server: _Server, settings: Settings) -> None:
    at = settings.replace(chroma_host="127.0.0.1", chroma_port=server.port, vector_cache=0)
    index = VectorIndex.from_settings(at, embedder=HashEmbedder())
    search = lambda: index.query(1, "launch date", channel_ids=[7], top_k=1)  # noqa: E731
    with pytest.raises(MemoryUnavailableError):  # never reached yet
        await search()
    server.start()
    await index.upsert(1, [VectorDoc("s1", "the launch date moved to 14 March", 7)])
    assert [m.key for m in await search()] == ["s1"]
    server.stop()
    with pytest.raises(MemoryUnavailableError):  # reached before, gone now
        await search()
    server.start()
    assert [m.key for m in await search()] == ["s1"]
