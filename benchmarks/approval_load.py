"""Asks waiting on an approval must not hold the worker's slots (the scripted model: NOT evidence of answer quality).

    python benchmarks/approval_load.py            # 100 asks, 20 of them wait on approvals that never come
    python benchmarks/approval_load.py --json

One `AskWorker` (4 slots, the default) on a SQLite file (or the database ASKWITH_DATABASE_URL names: give it an
empty one, both runs use it) and a local workspace. Run 1: the 80 ordinary asks alone.
Run 2: the 20 asks to a `share=ask` colleague who never answers are queued FIRST (the worst case: they are claimed
before any other), then the same 80. Printed: the time the 80 take in each run and the ratio (target <= 1.2). The
approval time-out is longer than the whole run, so no waiting ask ends by timing out; a run that cannot finish the
80 within `--deadline` seconds is reported as such (ratio = deadline / baseline, a lower bound).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.local.workspace import LocalWorkspace  # noqa: E402
from bot.asks import models  # noqa: E402
from bot.asks.service import AskRequest, AskService  # noqa: E402
from bot.asks.worker import AskWorker  # noqa: E402
from bot.llm.client import LLMClient  # noqa: E402
from bot.llm.scripted import ScriptedBackend  # noqa: E402
from bot.llm.standin.model import scripted_model  # noqa: E402
from bot.memory.access import MemoryAccess  # noqa: E402
from bot.memory.clear import ClearMemory  # noqa: E402
from bot.platform.port import Channel, ChannelKind, Member, SharePolicy  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.db import Database  # noqa: E402
from bot.store.world import MemberPolicy, World  # noqa: E402
from bot.store.world_mirror import mirror_world  # noqa: E402


TARGET = 1.2
QUESTION = "When is the launch date?"


@dataclass
class Run:
    seconds: float
    finished: int
    waiting: int
    timed_out: bool


def world() -> World:
    """alice asks bob (shares freely) or carol (`share=ask`, never answers); both know the launch date."""
    w = World(id="approval-load", name="approval load")
    policies = {"carol": MemberPolicy(share=SharePolicy.ASK)}
    for handle in ("alice", "bob", "carol", "erin"):
        w.add_member(Member(handle, handle, handle.title()), policies.get(handle, MemberPolicy()))
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    for minute, who in enumerate(("bob", "carol")):
        ts = start + timedelta(minutes=minute)
        w.add_message(w.dm(who, "erin").id, "erin", "The launch date moved to 14 March.", ts=ts)
    w.add_channel(Channel("C-general", "general", ChannelKind.PUBLIC, ("alice", "bob", "carol", "erin")))
    return w


async def one_run(data_dir: Path, *, ordinary: int, waiting: int, latency_s: float, deadline_s: float) -> Run:
    database_url = os.environ.get("ASKWITH_DATABASE_URL", "")
    settings = Settings(data_dir=data_dir, embedder="hash", approval_timeout_seconds=3600.0, database_url=database_url)
    db = await Database.open(settings)
    workspace_id = await mirror_world(db, world())
    port = LocalWorkspace(world())  # no responder: approvals wait for a click that never comes
    llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model, latency_s=latency_s))
    memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None)
    service = AskService(settings=settings, db=db, port=port, llm=llm, memory=memory, workspace_id=workspace_id)
    for _ in range(waiting):  # queued first: claimed before any ordinary ask
        await service.submit(AskRequest("alice", ["carol"], QUESTION))
    ordinary_ids = [await service.submit(AskRequest("alice", ["bob"], QUESTION)) for _ in range(ordinary)]
    worker = AskWorker(service, poll_seconds=0.05)
    stop = asyncio.Event()
    started = time.perf_counter()
    runner = asyncio.create_task(worker.run(stop=stop))
    finished, timed_out = 0, True
    while time.perf_counter() - started < deadline_s:
        finished = await _finished(db, ordinary_ids)
        if finished == ordinary:
            timed_out = False
            break
        await asyncio.sleep(0.05)
    seconds = time.perf_counter() - started
    stop.set()
    runner.cancel()  # waiting asks would otherwise hold the run until their approvals time out
    await asyncio.gather(runner, return_exceptions=True)
    await llm.aclose()
    await db.close()
    return Run(seconds, finished, waiting, timed_out)


async def _finished(db: Database, ids: list[int]) -> int:
    from sqlalchemy import func, select

    done = (models.AskStatus.DONE.value, models.AskStatus.FAILED.value)
    async with db.session() as session:
        stmt = select(func.count()).where(models.Ask.id.in_(ids), models.Ask.status.in_(done))
        return int((await session.execute(stmt)).scalar_one())


async def main(args: argparse.Namespace) -> dict[str, object]:
    logging.getLogger("sqlalchemy.pool").setLevel(logging.CRITICAL)  # asks still waiting are cancelled at the end
    with tempfile.TemporaryDirectory() as tmp:
        alone = await one_run(Path(tmp) / "alone", ordinary=args.ordinary, waiting=0, latency_s=args.latency,
                              deadline_s=args.deadline)  # fmt: skip
        loaded = await one_run(Path(tmp) / "loaded", ordinary=args.ordinary, waiting=args.waiting,
                               latency_s=args.latency, deadline_s=args.deadline)  # fmt: skip
    ratio = loaded.seconds / alone.seconds
    return {
        "ordinary_asks": args.ordinary,
        "waiting_asks": args.waiting,
        "alone_s": round(alone.seconds, 2),
        "with_waiting_s": round(loaded.seconds, 2),
        "finished_with_waiting": loaded.finished,
        "hit_deadline": loaded.timed_out,
        "ratio": round(ratio, 2),
        "target": TARGET,
        "meets_target": ratio <= TARGET and not loaded.timed_out,
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ordinary", type=int, default=80, help="asks with nobody to wait for")
    parser.add_argument("--waiting", type=int, default=20, help="asks waiting on approvals that never come")
    parser.add_argument("--latency", type=float, default=0.02, help="scripted model latency per call (s)")
    parser.add_argument("--deadline", type=float, default=120.0, help="give up on a run after this long (s)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse_args()
    figures = asyncio.run(main(arguments))
    if arguments.json:
        print(json.dumps(figures))
    else:
        print(f"{figures['ordinary_asks']} ordinary asks alone: {figures['alone_s']} s")
        hit = ", deadline hit" if figures["hit_deadline"] else ""
        print(f"the same with {figures['waiting_asks']} asks waiting on approvals: {figures['with_waiting_s']} s")
        print(f"  ({figures['finished_with_waiting']} of {figures['ordinary_asks']} finished{hit})")
        print(f"ratio: {figures['ratio']} (target <= {TARGET})")
