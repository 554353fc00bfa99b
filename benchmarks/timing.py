"""Wall-clock and CPU time, side by side, for benchmarks run on machines busy with other work.

    with spent() as cost:
        work()
    cost.wall_s, cost.cpu_s

    timings = Timings()
    async with timings.one():
        await query()
    percentile(timings.wall, 95)

CPU time is this process's, every thread included (the SQLite driver thread, onnxruntime's pool, Chroma's worker
thread), but not a database server's. Wall-clock shows how long work took; CPU time shows what it cost. When wall
time far exceeds CPU time on a single-threaded path, the process was waiting for a core other work held.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field


@dataclass
class Spent:
    wall_s: float = 0.0
    cpu_s: float = 0.0

    def __add__(self, other: Spent) -> Spent:
        return Spent(self.wall_s + other.wall_s, self.cpu_s + other.cpu_s)

    def __truediv__(self, divisor: float) -> Spent:
        return Spent(self.wall_s / divisor, self.cpu_s / divisor)


@contextmanager
def spent() -> Iterator[Spent]:
    """Measures the block; the yielded `Spent` is filled in when the block ends."""
    cost = Spent()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield cost
    finally:
        cost.wall_s, cost.cpu_s = time.perf_counter() - wall, time.process_time() - cpu


@dataclass
class Timings:
    """Per-operation wall-clock and CPU milliseconds."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @asynccontextmanager
    async def one(self) -> AsyncIterator[None]:
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        self.wall.append((time.perf_counter() - wall) * 1000)
        self.cpu.append((time.process_time() - cpu) * 1000)


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def load_average() -> float:
    """The machine's one-minute load average (runnable processes), or 0.0 where the platform has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def peak_rss_mib() -> float:
    """This process's own peak resident memory. Linux's VmHWM, not getrusage's ru_maxrss: ru_maxrss keeps the
    parent's high-water mark across exec, so a process started by a bigger one would report the parent's peak."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        return round(int(kib) / 1024, 1)
    except (OSError, StopIteration):
        import resource  # elsewhere (macOS counts bytes): the best there is

        scale = 1024 * 1024 if os.uname().sysname == "Darwin" else 1024
        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale, 1)
