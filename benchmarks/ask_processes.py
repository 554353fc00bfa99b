"""`benchmarks/ask.py --processes N`: the same asks spread over processes, as deployed (docs/deploy.md).

    ASKWITH_DATABASE_URL=postgresql://postgres@localhost/postgres python benchmarks/ask.py --processes 2

This process plays `askwith serve`'s inbound side: it ingests FriendsTV into a scratch database on the PostgreSQL
server ASKWITH_DATABASE_URL names (dropped afterwards), writes the workspace to a world file and submits asks with
`AskService.submit`, as serve does for `/ask-with`. N real `askwith worker --scripted --workspace <that file>`
processes claim and run them (the scripted model waits ASKWITH_SCRIPTED_LATENCY_SECONDS per call, like the
one-process mode's). One ask alone, then `--concurrent` at once: each ask's wall time runs from its submission to its
finished state in the database.

CPU per ask is summed over this process and the workers (from /proc: user + system time); the CPU of the PostgreSQL
backends serving the scratch database is reported beside it (sampled every 0.2 s, so a backend's last moments before
it closes may be missed). Where the last ask lost its time comes from the database: before its talk began (waiting to
be claimed, then setting up: submission to its first conversation's record), in its talk and delivery beyond its
model calls, and its model calls on the critical path (the transcript's call latencies).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import func, select, text

from adapters.local.workspace import LocalWorkspace
from benchmarks.reach_figures import critical_path
from benchmarks.scratch_postgres import scratch_postgres
from bot.asks import models
from bot.asks.read_models.transcripts import load_transcript
from bot.settings import Settings


if TYPE_CHECKING:
    from benchmarks.ask import Bench

READY_WITHIN_S = 300.0  # a worker opens the workspace and its memory before it says it runs
FINISHED = ("done", "failed", "cancelled")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (fields 14 and 15 of stat)


class Workers:
    """N `askwith worker` processes on the benchmark's database and data directory."""

    def __init__(self, settings: Settings, world_file: Path, *, count: int, latency_s: float, concurrent: int) -> None:
        self.env = {
            **os.environ, "ASKWITH_DATABASE_URL": settings.database_url, "ASKWITH_DATA_DIR": str(settings.data_dir),
            "ASKWITH_EMBEDDER": settings.embedder, "ASKWITH_SCRIPTED_LATENCY_SECONDS": str(latency_s),
            "ASKWITH_LLM_CONCURRENCY": str(settings.llm_concurrency), "ASKWITH_WORKER_CONCURRENCY": str(concurrent),
        }  # fmt: skip
        self.command = [sys.executable, "-m", "bot", "worker", "--scripted", "--workspace", str(world_file)]
        self.logs = settings.data_dir
        self.count = count
        self.procs: list[subprocess.Popen[bytes]] = []

    async def __aenter__(self) -> Workers:
        root = Path(__file__).resolve().parent.parent
        for i in range(self.count):
            with (self.logs / f"worker-{i}.out").open("wb") as out, (self.logs / f"worker-{i}.err").open("wb") as err:
                self.procs.append(subprocess.Popen(self.command, cwd=root, env=self.env, stdout=out, stderr=err))
        deadline = time.monotonic() + READY_WITHIN_S
        while not all(b"running" in (self.logs / f"worker-{i}.out").read_bytes() for i in range(self.count)):
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                await self.__aexit__()
                raise RuntimeError(f"a worker did not start: {self.tail()}")
            await asyncio.sleep(0.2)
        return self

    async def __aexit__(self, *exc: object) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                await asyncio.to_thread(proc.wait, 60)
            except subprocess.TimeoutExpired:
                proc.kill()

    def tail(self) -> str:
        return " | ".join((self.logs / f"worker-{i}.err").read_text()[-1500:] for i in range(self.count))

    def cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.procs)


class Backends:
    """CPU of the PostgreSQL backends serving one database, sampled until stopped: per backend, the last reading
    less the first (a backend that starts meanwhile counts from 0)."""

    def __init__(self, bench: Bench, database: str) -> None:
        self.bench, self.database = bench, database
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}

    async def sample(self, stop: asyncio.Event) -> None:
        started = True
        while not stop.is_set():
            async with self.bench.service.db.session() as session:
                query = text("SELECT pid FROM pg_stat_activity WHERE datname = :d")
                pids = [int(pid) for pid in (await session.execute(query, {"d": self.database})).scalars()]
            for pid in pids:
                cpu = cpu_seconds(pid)
                self.first.setdefault(pid, cpu if started else 0.0)
                self.last[pid] = max(cpu, self.last.get(pid, 0.0))
            started = False
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.2):
                    await stop.wait()

    def cpu(self) -> float:
        return sum(self.last[pid] - self.first[pid] for pid in self.last)


async def finished(bench: Bench, ask_ids: list[int], *, timeout_s: float) -> list[models.Ask]:
    """The asks once all are finished (polled: they finish in other processes)."""
    deadline = time.monotonic() + timeout_s
    while True:
        async with bench.service.db.session() as session:
            asks = list((await session.execute(select(models.Ask).where(models.Ask.id.in_(ask_ids)))).scalars())
        if all(a.status in FINISHED for a in asks):
            return asks
        if time.monotonic() > deadline:
            waiting = [a.id for a in asks if a.status not in FINISHED]
            raise TimeoutError(f"asks unfinished after {timeout_s:.0f} s: {waiting}")
        await asyncio.sleep(0.1)


async def submit_and_wait(bench: Bench, count: int, *, timeout_s: float) -> tuple[datetime, list[models.Ask]]:
    submitted = datetime.now(UTC)
    ids = await asyncio.gather(*(bench.service.submit(bench.questions[0]) for _ in range(count)))
    return submitted, await finished(bench, list(ids), timeout_s=timeout_s)


async def where_lost(bench: Bench, ask: models.Ask) -> dict[str, float]:
    """Seconds before its talk began, in its talk beyond model calls, in model calls (critical path)."""
    assert ask.finished_at is not None
    model_s = critical_path(await load_transcript(bench.service.db, ask.id), seconds=True)
    async with bench.service.db.session() as session:
        first = select(func.min(models.Conversation.created_at)).where(models.Conversation.ask_id == ask.id)
        talk_began = (await session.execute(first)).scalar_one() or ask.finished_at
    return {
        "before_talk": (talk_began - ask.created_at).total_seconds(),
        "outside_model": (ask.finished_at - talk_began).total_seconds() - model_s,
        "model": model_s,
    }


async def measure_processes(bench: Bench, workers: Workers, *, concurrent: int, database: str) -> dict[str, float]:
    timeout_s = 60 + 10 * concurrent * bench.latency_s
    await submit_and_wait(bench, 2 * workers.count, timeout_s=timeout_s)  # warm-up: every worker has run an ask
    _, (alone,) = await submit_and_wait(bench, 1, timeout_s=timeout_s)
    assert alone.finished_at is not None
    one_s = (alone.finished_at - alone.created_at).total_seconds()
    backends, sampled = Backends(bench, database), asyncio.Event()
    sampling = asyncio.create_task(backends.sample(sampled))
    workers_before, own_before = workers.cpu(), time.process_time()
    submitted, asks = await submit_and_wait(bench, concurrent, timeout_s=timeout_s)
    workers_cpu, own_cpu = workers.cpu() - workers_before, time.process_time() - own_before
    sampled.set()
    await sampling
    postgres_cpu = backends.cpu()
    last = max(asks, key=lambda a: a.finished_at or submitted)
    assert last.finished_at is not None
    together_s = (last.finished_at - submitted).total_seconds()
    return {
        **{f"slowest_{k}_s": v for k, v in (await where_lost(bench, last)).items()},
        **{f"alone_{k}_s": v for k, v in (await where_lost(bench, alone)).items()},
        "processes": workers.count,
        "one_ask_s": one_s,
        "concurrent_s": together_s,
        "concurrent_over_one": together_s / one_s,
        "cpu_ms_per_ask": 1000 * (workers_cpu + own_cpu) / concurrent,
        "workers_cpu_ms_per_ask": 1000 * workers_cpu / concurrent,
        "postgres_cpu_ms_per_ask": 1000 * postgres_cpu / concurrent,
        "postgres_backends": len(backends.last),
        "answered": sum(a.status == "done" for a in asks) / len(asks),
    }


async def run_processes(
    settings: Settings, setup: Callable[..., Awaitable[Bench]], *, processes: int, concurrent: int, latency_s: float
) -> dict[str, float]:
    """Set up on a scratch PostgreSQL database, start the workers, measure; everything is stopped and dropped."""
    if not settings.database_url.startswith("postgresql"):
        raise SystemExit("--processes needs ASKWITH_DATABASE_URL naming a PostgreSQL server (a scratch database)")
    async with scratch_postgres(settings.database_url) as url:
        settings = settings.replace(database_url=url)
        bench = await setup(settings, latency_s=latency_s, questions=1)
        try:
            world_file = settings.data_dir / "friendstv-bench.json"
            LocalWorkspace(bench.service.port.world).save(world_file)
            workers = Workers(settings, world_file, count=processes, latency_s=latency_s, concurrent=concurrent)
            async with workers:
                database = url.rsplit("/", 1)[1]
                return await measure_processes(bench, workers, concurrent=concurrent, database=database)
        finally:
            await bench.service.db.close()


def report(figures: dict[str, float], *, concurrent: int, latency_s: float) -> str:
    return "\n".join(
        [
            f"askwith ask benchmark across processes: FriendsTV on PostgreSQL, this process submitting and "
            f"{figures['processes']:.0f} `askwith worker` processes running asks; scripted model "
            f"({latency_s:g} s/call; not answer quality)",
            f"one ask: {figures['one_ask_s']:.2f} s from submission to finished",
            f"{concurrent} concurrent asks: {figures['concurrent_s']:.2f} s / one ask = "
            f"{figures['concurrent_over_one']:.3f}  (target <= 1.5)  "
            f"{'ok' if figures['concurrent_over_one'] <= 1.5 else 'MISSED'}",
            f"  CPU per ask, all askwith processes: {figures['cpu_ms_per_ask']:.0f} ms (target <= 100; workers "
            f"{figures['workers_cpu_ms_per_ask']:.0f} ms); PostgreSQL's backends beside it: "
            f"{figures['postgres_cpu_ms_per_ask']:.0f} ms ({figures['postgres_backends']:.0f} backends)",
            f"  where the last of them lost its time, in s (alone in brackets): "
            f"{figures['slowest_before_talk_s']:.2f} ({figures['alone_before_talk_s']:.2f}) before its talk began "
            f"(claim, set-up), {figures['slowest_outside_model_s']:.2f} ({figures['alone_outside_model_s']:.2f}) in "
            f"its talk and delivery beyond model calls, {figures['slowest_model_s']:.2f} "
            f"({figures['alone_model_s']:.2f}) in model calls (critical path)",
            f"asks answered (scripted): {figures['answered']:.0%}",
        ]
    )
