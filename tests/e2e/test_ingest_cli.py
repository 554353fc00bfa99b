from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.e2e.cli_helpers import (
    FRIENDSTV_MEMBERS,
    FRIENDSTV_MESSAGES,
    askwith,
    start_askwith,
    summary_value,
    table_counts,
)


# Everything ingestion writes; an interrupted-then-resumed run must leave exactly what an uninterrupted one does.
INGEST_TABLES = (
    "workspace",
    "member",
    "channel",
    "membership",
    "message",
    "ingest_cursor",
    "memory_session",
    "session_message",
    "session_summary",
    "memory_session WHERE summarized",
    "memory_session WHERE embedded",
)
KILL_ARGS = ("ingest", "--workspace", "friendstv", "--page-size", "25")


def test_ingest_the_sample_workspace_twice(tmp_path: Path) -> None:
    first = askwith(tmp_path, "ingest", "--workspace", "acme")
    assert first.returncode == 0, first.stderr
    assert summary_value(first.stdout, "members") == "5 (5 opted in)"
    assert summary_value(first.stdout, "messages added") == "15"
    assert "Reading channels" in first.stderr  # the progress bar
    second = askwith(tmp_path, "ingest", "-w", "acme")
    assert summary_value(second.stdout, "messages added") == "0"
    assert summary_value(second.stdout, "messages total") == "15"


def test_cli_errors_are_one_clear_line(tmp_path: Path) -> None:
    unknown = askwith(tmp_path, "ingest", "--workspace", "nope")
    assert unknown.returncode == 1
    assert unknown.stderr.strip().splitlines() == [
        "error: There is no workspace 'nope'. Known: acme, friendstv, or a path to a workspace JSON file."
    ]
    no_data = askwith(tmp_path, "ingest", "--workspace", "friendstv", ASKWITH_BENCH_DATA_DIR="")
    assert no_data.returncode == 1
    assert no_data.stderr.strip().startswith("error: ASKWITH_BENCH_DATA_DIR is not set")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": 99}))
    bad_file = askwith(tmp_path, "ingest", "--workspace", str(bad))
    assert bad_file.returncode == 1 and "Unsupported workspace file format 99" in bad_file.stderr


@pytest.mark.slow
def test_ingest_friendstv_twice(tmp_path: Path, bench_data_dir: Path) -> None:
    first = askwith(tmp_path, "ingest", "--workspace", "friendstv")
    assert first.returncode == 0, first.stderr
    assert summary_value(first.stdout, "members") == f"{FRIENDSTV_MEMBERS} ({FRIENDSTV_MEMBERS} opted in)"
    assert summary_value(first.stdout, "messages added") == f"{FRIENDSTV_MESSAGES:,}"
    sessions = table_counts(tmp_path, ("memory_session",))["memory_session"]
    assert summary_value(first.stdout, "sessions added") == summary_value(first.stdout, "embeddings added")
    assert summary_value(first.stdout, "sessions added") == f"{sessions:,}" and sessions > 500
    second = askwith(tmp_path, "ingest", "--workspace", "friendstv")
    assert second.returncode == 0, second.stderr
    assert summary_value(second.stdout, "messages total") == f"{FRIENDSTV_MESSAGES:,}"
    for row in ("messages added", "sessions added", "summaries added", "embeddings added"):
        assert summary_value(second.stdout, row) == "0", row


def kill_part_way(data_dir: Path, args: tuple[str, ...], when: str) -> dict[str, int]:
    """Start `askwith ingest`, SIGKILL it as soon as `SELECT count(*) FROM <when>` is positive; returns the counts
    it left behind."""
    proc = start_askwith(data_dir, *args)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if table_counts(data_dir, (when,))[when] > 0:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.01)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "ingestion finished before it could be killed"
    return table_counts(data_dir, INGEST_TABLES)


def vector_count(data_dir: Path) -> int:
    """Vectors in the workspace's Chroma collection (orphans or duplicates would show here)."""
    from bot.memory.vector_index import VectorIndex
    from bot.settings import Settings

    with closing(sqlite3.connect(data_dir / "askwith.db")) as conn:
        (workspace_id,) = conn.execute("SELECT id FROM workspace WHERE external_id = 'friendstv'").fetchone()
    return asyncio.run(VectorIndex.from_settings(Settings(data_dir=data_dir, embedder="hash")).count(workspace_id))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """What one uninterrupted FriendsTV ingestion leaves behind."""
    if not os.environ.get("ASKWITH_BENCH_DATA_DIR"):
        pytest.skip("ASKWITH_BENCH_DATA_DIR is not set")
    data_dir = tmp_path_factory.mktemp("clean")
    clean = askwith(data_dir, *KILL_ARGS)
    assert clean.returncode == 0, clean.stderr
    return {**table_counts(data_dir, INGEST_TABLES), "vectors": vector_count(data_dir)}


@pytest.mark.slow
@pytest.mark.parametrize("kill_when", ["message", "session_summary", "memory_session WHERE embedded"])
def test_a_killed_ingestion_resumes_to_exactly_the_uninterrupted_result(
    tmp_path: Path, uninterrupted: dict[str, int], kill_when: str
) -> None:
    assert uninterrupted["message"] == FRIENDSTV_MESSAGES
    left = kill_part_way(tmp_path, KILL_ARGS, kill_when)
    assert left != uninterrupted  # really cut off part-way
    resumed = askwith(tmp_path, *KILL_ARGS)
    assert resumed.returncode == 0, resumed.stderr
    added = FRIENDSTV_MESSAGES - left["message"]
    assert summary_value(resumed.stdout, "messages added") == f"{added:,}"
    assert {**table_counts(tmp_path, INGEST_TABLES), "vectors": vector_count(tmp_path)} == uninterrupted
    again = askwith(tmp_path, *KILL_ARGS)
    for row in ("messages added", "sessions added", "summaries added", "embeddings added"):
        assert summary_value(again.stdout, row) == "0", row
