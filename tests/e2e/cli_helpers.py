"""Run the real `askwith` command line in a subprocess, with fast offline settings and a data dir of its own."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
FRIENDSTV_MEMBERS = 140
FRIENDSTV_MESSAGES = 11_593


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKWITH_")}
    if bench := os.environ.get("ASKWITH_BENCH_DATA_DIR"):
        env["ASKWITH_BENCH_DATA_DIR"] = bench
    env.update(
        ASKWITH_DATA_DIR=str(data_dir),
        ASKWITH_EMBEDDER="hash",
        ASKWITH_LLM_BASE_URL="",
        ASKWITH_DATABASE_URL="",
        ASKWITH_LOG_LEVEL="WARNING",
        COLUMNS="160",
    )
    env.update(extra)
    return env


def askwith(data_dir: Path, *args: str, timeout: float = 120, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env=cli_env(data_dir, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# Sets the SIGINT disposition the command starts with, then becomes it (exec keeps an ignored signal ignored).
_WITH_SIGINT = "import os, signal, sys; signal.signal(signal.SIGINT, {}); os.execv(sys.executable, sys.argv[1:])"


def start_askwith(data_dir: Path, *args: str, sigint_ignored: bool = False, **extra: str) -> subprocess.Popen[str]:
    """`sigint_ignored`: start as a background job of a script would (SIGINT ignored); either way it is set
    explicitly, so the test does not depend on how its own runner was started."""
    disposition = "signal.SIG_IGN" if sigint_ignored else "signal.SIG_DFL"
    return subprocess.Popen(
        [sys.executable, "-c", _WITH_SIGINT.format(disposition), sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env=cli_env(data_dir, **extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def table_counts(data_dir: Path, tables: tuple[str, ...]) -> dict[str, int]:
    """Row counts straight from the SQLite file (readable while another process writes: WAL). A name may carry a
    condition: "memory_session WHERE embedded"."""
    path = data_dir / "askwith.db"
    if not path.exists():
        return dict.fromkeys(tables, 0)
    with closing(sqlite3.connect(path, timeout=30)) as conn:
        try:
            return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
        except sqlite3.OperationalError:  # schema not migrated yet
            return dict.fromkeys(tables, 0)


def summary_value(output: str, row: str) -> str:
    """The value of one row of `askwith ingest`'s summary table."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("│|").split("│")]
        if len(cells) == 2 and cells[0] == row:
            return cells[1]
    raise AssertionError(f"no {row!r} row in:\n{output}")
