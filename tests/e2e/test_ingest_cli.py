from __future__ import annotations

import json
import signal
import time
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
INGEST_TABLES = ("workspace", "member", "channel", "membership", "message", "ingest_cursor")


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


def test_ingest_friendstv_twice(tmp_path: Path, bench_data_dir: Path) -> None:
    first = askwith(tmp_path, "ingest", "--workspace", "friendstv")
    assert first.returncode == 0, first.stderr
    assert summary_value(first.stdout, "members") == f"{FRIENDSTV_MEMBERS} ({FRIENDSTV_MEMBERS} opted in)"
    assert summary_value(first.stdout, "messages added") == f"{FRIENDSTV_MESSAGES:,}"
    second = askwith(tmp_path, "ingest", "--workspace", "friendstv")
    assert second.returncode == 0, second.stderr
    assert summary_value(second.stdout, "messages added") == "0"
    assert summary_value(second.stdout, "messages total") == f"{FRIENDSTV_MESSAGES:,}"


def kill_part_way(data_dir: Path, *args: str) -> int:
    """Start `askwith ingest`, SIGKILL it once some (not all) messages are stored; returns how many were."""
    proc = start_askwith(data_dir, *args)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            stored = table_counts(data_dir, ("message",))["message"]
            if stored > 0:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.01)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "ingestion finished before it could be killed"
    return table_counts(data_dir, ("message",))["message"]


@pytest.mark.slow
def test_a_killed_ingestion_resumes_to_exactly_the_uninterrupted_result(tmp_path: Path, bench_data_dir: Path) -> None:
    args = ("ingest", "--workspace", "friendstv", "--page-size", "25")
    clean = askwith(tmp_path / "clean", *args)
    assert clean.returncode == 0, clean.stderr
    expected = table_counts(tmp_path / "clean", INGEST_TABLES)
    assert expected["message"] == FRIENDSTV_MESSAGES

    killed_at = kill_part_way(tmp_path / "killed", *args)
    assert 0 < killed_at < FRIENDSTV_MESSAGES
    resumed = askwith(tmp_path / "killed", *args)
    assert resumed.returncode == 0, resumed.stderr
    assert summary_value(resumed.stdout, "messages added") == f"{FRIENDSTV_MESSAGES - killed_at:,}"
    assert table_counts(tmp_path / "killed", INGEST_TABLES) == expected
    again = askwith(tmp_path / "killed", *args)
    assert summary_value(again.stdout, "messages added") == "0"
