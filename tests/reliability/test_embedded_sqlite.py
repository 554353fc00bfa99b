"""The embedded SQLite store has no moving parts of its own: the old `ASKWITH_SQLITE_READERS` setting starts no
process whatever its value, and a stalled writer or a stopped helper process cannot stall `/healthz` or reads."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from bot.settings import Settings
from bot.store import db as store_db
from bot.store.db import Database


ROOT = Path(__file__).parents[2]
ANSWER_BOUND_S = 10.0  # a read or health check that takes longer than this is a hang (a load balancer gives up)
METRICS_TOKEN = "metrics-test-token"
# Run as `python -c`: the CLI, with an audit hook that ends the process at its first attempt to start another one
# (so an unbounded count can never fork the machine to death), and its peak memory written when it exits. The peak is
# the process's own (VmHWM): getrusage's ru_maxrss keeps the high-water mark of the parent across exec, so it would
# report the test runner's memory, not the command's.
NO_SPAWN_CLI = """
import atexit, os, runpy, sys
SPAWNS = ("subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system")

def refuse(event, args):
    if event in SPAWNS:
        os.write(2, f"STARTED A PROCESS: {event} {args!r:.300}\\n".encode())
        os._exit(97)

def peak():
    with open("/proc/self/status") as status:
        kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["PEAK_FILE"], "w") as out:
        out.write(kib)

sys.addaudithook(refuse)
atexit.register(peak)
sys.argv = ["askwith", *sys.argv[1:]]
runpy.run_module("bot", run_name="__main__", alter_sys=True)
"""


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKWITH_")}
    env.update(ASKWITH_EMBEDDER="hash", ASKWITH_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(ROOT), **settings)
    return env


# ---------------------------------------------------------------------- the old reader-count setting
@pytest.mark.parametrize("readers", ["40", "300000"])
def test_the_old_sqlite_readers_setting_starts_no_process_and_costs_no_memory(tmp_path: Path, readers: str) -> None:
    peak_file = tmp_path / "peak"
    env = _env(tmp_path, ASKWITH_SQLITE_READERS=readers, PEAK_FILE=str(peak_file))
    done = subprocess.run(
        [sys.executable, "-c", NO_SPAWN_CLI, "transcripts", "list"], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert "STARTED A PROCESS" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode != 0:  # refused: one line naming the setting
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "ASKWITH_SQLITE_READERS" in lines[0], done.stderr
    peak_mib = int(peak_file.read_text()) / 1024
    assert peak_mib < 1024, f"{peak_mib:.0f} MiB for a one-line command"  # the same command costs ~100-200 MiB


# ---------------------------------------------------------------------- stalls
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _descendants(pid: int) -> list[int]:
    """Every process started by `pid`, and by those, as /proc lists them now."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue  # /proc/self, /proc/meminfo...
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue  # not a process, or it ended meanwhile
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`askwith serve` with its defaults on a fresh data directory: (its URL, the process)."""
    port = _free_port()
    env = _env(tmp_path, ASKWITH_WEB_PORT=str(port), ASKWITH_METRICS_TOKEN=METRICS_TOKEN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "serve"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    url, line = f"http://127.0.0.1:{port}/", ""
    deadline = time.monotonic() + 90
    while url not in line and time.monotonic() < deadline and proc.poll() is None:
        line = proc.stdout.readline()  # type: ignore[union-attr]
    try:
        assert url in line, f"serve did not start: {line!r}"
        yield url, proc
    finally:
        for child in _descendants(proc.pid):  # stopped by the test: let them end with their parent
            os.kill(child, signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def test_a_stalled_writer_and_stopped_helpers_never_stall_health_checks_or_reads(
    served: tuple[str, subprocess.Popen[str]], tmp_path: Path
) -> None:
    url, proc = served
    assert httpx.get(f"{url}healthz", timeout=ANSWER_BOUND_S).status_code == 200  # the store has been read once
    stopped = _descendants(proc.pid)
    for child in stopped:  # whatever the server started to help it (the old code: its SQLite reader)
        os.kill(child, signal.SIGSTOP)
    writer = sqlite3.connect(tmp_path / "data" / "askwith.db", isolation_level=None, timeout=ANSWER_BOUND_S)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock and never commits (stalled)
        writer.execute("DELETE FROM ask")
        for _ in range(3):  # each an answer within the bound, not a hang
            health = httpx.get(f"{url}healthz", timeout=ANSWER_BOUND_S)
            assert health.status_code == 200 and health.json()["database"] == "ok", health.text
            metrics = httpx.get(
                f"{url}metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=ANSWER_BOUND_S
            )  # read from the record
            assert metrics.status_code == 200 and "askwith" in metrics.text, metrics.text[:200]
    finally:
        writer.execute("ROLLBACK")
        writer.close()


async def test_a_write_behind_a_stalled_writer_fails_within_the_busy_timeout_and_reads_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_db, "SQLITE_BUSY_TIMEOUT_S", 0.5)  # the same wait as the default's 30 s, shorter
    db = await Database.open(Settings(data_dir=tmp_path, embedder="hash"))
    try:
        async with db.begin() as stalled:  # a task of this process that holds a write transaction and stalls
            await stalled.execute(text("DELETE FROM ask"))
            async with asyncio.timeout(ANSWER_BOUND_S):
                async with db.session() as session:
                    assert (await session.execute(text("SELECT count(*) FROM ask"))).scalar_one() == 0
                with pytest.raises(OperationalError, match="database is locked"):
                    async with db.begin() as second:
                        await second.execute(text("DELETE FROM ask"))
    finally:
        await db.close()
