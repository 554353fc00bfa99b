"""One ask-worker process for the kill test: `python -m tests.fakes.ask_worker_process --db URL ...`.

It claims asks from the shared database, runs them with the scripted model (a fixed latency per call, so an ask
takes a few seconds) on the real clear memory, posts through `AppendLogWorkspace`, and exits after one ask. Nothing
clicks its approval prompts: a decision comes from the database (`ApprovalStore`), as a click heard elsewhere does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from bot.asks.service import AskService
from bot.asks.worker import AskWorker
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import World
from tests.fakes.durable_port import AppendLogWorkspace


ROOT = Path(__file__).parents[2]


def spawn(name: str, db_url: str, tmp: Path, workspace_id: int, *extra: str) -> subprocess.Popen[str]:
    """Start one worker process over `tmp`'s world.json and posts.jsonl; its output goes to `tmp/<name>.out|err`."""
    args = [
        sys.executable, "-m", "tests.fakes.ask_worker_process", "--db", db_url, "--data", str(tmp / name),
        "--world", str(tmp / "world.json"), "--posts", str(tmp / "posts.jsonl"), "--name", name,
        "--workspace-id", str(workspace_id), "--latency", "0.15", "--stale", "1.0", "--heartbeat", "0.2", *extra,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with (tmp / f"{name}.out").open("w") as out, (tmp / f"{name}.err").open("w") as err:
        return subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=err, text=True)


async def exited(process: subprocess.Popen[str], *, timeout_s: float) -> int:
    """The process's exit code, polled without blocking the event loop (a proxy on it keeps forwarding)."""
    deadline = time.monotonic() + timeout_s
    while (code := process.poll()) is None:
        if time.monotonic() > deadline:
            raise TimeoutError(f"worker process {process.pid} still running after {timeout_s} s")
        await asyncio.sleep(0.05)
    return code


def output(tmp: Path, name: str) -> tuple[str, str]:
    """(stdout, stderr) of the worker process `name` started by `spawn`."""
    return (tmp / f"{name}.out").read_text(), (tmp / f"{name}.err").read_text()


async def main(args: argparse.Namespace) -> None:
    settings = Settings(
        data_dir=Path(args.data),
        embedder="hash",
        worker_stale_seconds=args.stale,
        worker_heartbeat_seconds=args.heartbeat,
        approval_timeout_seconds=args.approval_timeout,
    )
    db = await Database.open(settings, url=args.db, migrate=False)
    port = AppendLogWorkspace(World.load(args.world), posts=Path(args.posts))
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model, latency_s=args.latency))
    service = AskService(
        settings=settings, db=db, port=port, llm=llm, memory=MemoryAccess(ClearMemory(db), None),
        workspace_id=args.workspace_id, worker_id=args.name,
    )  # fmt: skip
    worker = AskWorker(service, poll_seconds=0.1)
    deadline = time.monotonic() + args.timeout
    try:
        while time.monotonic() < deadline:
            if (outcome := await worker.run_once()) is not None:
                print(f"finished ask {outcome.ask_id}", flush=True)
                return
            await asyncio.sleep(0.1)
    finally:
        await db.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for name in ("--db", "--data", "--world", "--posts", "--name"):
        parser.add_argument(name, required=True)
    parser.add_argument("--workspace-id", type=int, required=True)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--stale", type=float, default=1.0)
    parser.add_argument("--heartbeat", type=float, default=0.2)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--approval-timeout", type=float, default=600.0)
    asyncio.run(main(parser.parse_args()))
