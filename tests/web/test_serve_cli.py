"""`askwith serve` on a fresh data directory: starts the local workspace, prints its URL, serves, stops cleanly on
SIGINT and SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest


ROOT = Path(__file__).parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_prints_the_local_workspace_url_and_answers_health_checks(tmp_path: Path, stop: signal.Signals) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKWITH_")}
    env.update(ASKWITH_WEB_PORT=str(port), ASKWITH_EMBEDDER="hash", ASKWITH_DATA_DIR=str(tmp_path / "data"))
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "serve"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/"
        line = ""
        deadline = time.monotonic() + 60
        while url not in line and time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline()  # type: ignore[union-attr]
        assert url in line and "acme" in line, line
        assert "No language model configured" in proc.stdout.readline()  # type: ignore[union-attr]
        health = httpx.get(f"{url}healthz", timeout=10).json()
        assert health == {"status": "ok", "database": "ok", "llm": "not configured", "platforms": ["local"]}
    finally:
        proc.send_signal(stop)
        proc.wait(timeout=30)
    assert proc.returncode == 0  # a clean shutdown: uvicorn stops, then the runtime around it
    assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
