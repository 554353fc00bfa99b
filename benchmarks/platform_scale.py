"""Workspaces of 50,000 members: the membership sync on Slack and visibility events on Discord, against the project's
fake Slack and Discord APIs over HTTP on this machine, on SQLite and PostgreSQL.

    python benchmarks/platform_scale.py                          # 50,000 x 10,000 Slack; 50,000 x 500 Discord
    python benchmarks/platform_scale.py --members 5000 --channels 1000 --discord-channels 100 --json
    python benchmarks/platform_scale.py --part slack --engine postgresql

Slack (each engine in a process of its own, the fake Slack in another, so peak RSS is askwith's alone): a first
scheduled run (the full listing: members, channels, each channel's members, written to the store) and a second run
with nothing changed, with the product's default reconciliation interval; their Web API calls and times.
Discord (SQLite): the server mirrored at start, then 100 member-role and role events arrive (five a second, as a
burst of role edits would) while 20 `/ask-with` interactions come in, then one a second until every event is
applied; over that whole time, the event loop's stall p99 (how late a 5 ms timer fires) and the time to each
interaction's first response (the defer); after it, for every member touched and 300 others, what the store says
they read against what Discord's rules say (the oracle).

What the figures do NOT show: no history is read (nobody opted in), so the run times are the structure sync alone;
the fakes answer at once, so Slack's rate limits (users.list is Tier 2, ~20 calls a minute) and Discord's latency
are not in the times: the call counts are what those limits would bite on. The Discord fake runs in the measured
process (its HTTP handling shares the loop; it is idle during the events, which need no listing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.platform_scale_discord import measure_discord  # noqa: E402
from benchmarks.scratch_postgres import scratch_postgres  # noqa: E402
from benchmarks.timing import load_average, peak_rss_mib  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.db import Database  # noqa: E402


POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
STRUCTURE = ("users.list", "users.conversations", "conversations.list", "conversations.members", "conversations.info")


# ---------------------------------------------------------------------- the fake Slack, in a process of its own
def _serve_slack(members: int, channels: int, seed: int, conn: Any) -> None:  # noqa: ANN401 - a Pipe end
    from tests.fakes.scale_worlds import ScaleSlackApi, slack_team

    async def serve() -> None:
        api = ScaleSlackApi(slack_team(members, channels, seed=seed))
        conn.send((await api.start(), api.bot_token))
        loop = asyncio.get_running_loop()
        while (command := await loop.run_in_executor(None, conn.recv)) != "stop":
            conn.send([c.method for c in api.calls] if command == "calls" else None)
        await api.stop()

    asyncio.run(serve())


async def _calls(conn: Any) -> list[str]:  # noqa: ANN401 - a Pipe end
    conn.send("calls")
    return await asyncio.get_running_loop().run_in_executor(None, conn.recv)


async def slack_sync(members: int, channels: int, engine: str, seed: int) -> dict[str, Any]:
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.Process(target=_serve_slack, args=(members, channels, seed, theirs), daemon=True)
    server.start()
    base_url, token = ours.recv()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="askwith-scale-")), slack_bot_token=token)
    settings = settings.replace(slack_api_url=base_url)
    figures: dict[str, Any] = {"engine": engine, "members": members, "channels": channels}
    async with _database(engine, settings) as url:
        db = await Database.open(settings, url=url)
        try:
            await _two_syncs(settings, db, ours, figures)
        finally:
            figures["peak_rss_mib"] = peak_rss_mib()
            await db.close()
            ours.send("stop")
            server.join(timeout=30)
    return figures


async def _two_syncs(settings: Settings, db: Database, ours: Any, figures: dict[str, Any]) -> None:
    """The first mirror of the workspace, then a second with nothing changed (what a scheduled run costs)."""
    from adapters.slack.client import web_client
    from adapters.slack.port import SlackPort
    from memory_ingest.worker import IngestWorker

    reconcile_s = getattr(settings, "member_reconcile_hours", 0) * 3600  # 0 on code without the setting
    kwargs = {"reconcile_s": reconcile_s} if reconcile_s else {}
    worker = IngestWorker(SlackPort(web_client(settings)), db, **kwargs)
    for run in ("first", "second"):
        before = len(await _calls(ours))
        started = time.perf_counter()
        try:
            await worker.run()
        except Exception as exc:  # the figure is whether it succeeds
            figures[f"{run}_error"] = f"{type(exc).__name__}: {str(exc)[:160]}"
            break
        figures[f"{run}_seconds"] = round(time.perf_counter() - started, 2)
        figures[f"{run}_calls"] = sum(m in STRUCTURE for m in (await _calls(ours))[before:])
    if "second_calls" in figures:
        figures["second_over_first_calls"] = round(figures["second_calls"] / max(1, figures["first_calls"]), 4)


@asynccontextmanager
async def _database(engine: str, settings: Settings) -> AsyncIterator[str]:
    if engine == "sqlite":
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        yield f"sqlite+aiosqlite:///{settings.data_dir / 'scale.db'}"
        return
    async with scratch_postgres(POSTGRES_URL, prefix="askwith_scale") as url:
        yield url


# ---------------------------------------------------------------------- the command line
def _child(args: argparse.Namespace, part: str, engine: str) -> dict[str, Any]:
    """One part in a fresh process, so its peak RSS is its own."""
    command = [sys.executable, __file__, "--part", part, "--engine", engine, "--json", "--members", str(args.members)]
    command += ["--channels", str(args.channels), "--discord-channels", str(args.discord_channels)]
    command += ["--events", str(args.events), "--seed", str(args.seed)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"part": part, "engine": engine, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=50_000)
    parser.add_argument("--channels", type=int, default=10_000, help="Slack channels")
    parser.add_argument("--discord-channels", type=int, default=500)
    parser.add_argument("--events", type=int, default=100, help="Discord member and role events")
    parser.add_argument("--part", choices=["all", "slack", "discord"], default="all")
    parser.add_argument("--engine", choices=["both", "sqlite", "postgresql"], default="both")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    engines = ["sqlite", "postgresql"] if args.engine == "both" else [args.engine]
    if args.part == "slack" and len(engines) == 1:
        result: Any = asyncio.run(slack_sync(args.members, args.channels, engines[0], args.seed))
    elif args.part == "discord" and len(engines) == 1:
        result = asyncio.run(measure_discord(args.members, args.discord_channels, args.events, args.seed))
    else:
        parts = ["slack", "discord"] if args.part == "all" else [args.part]
        result = [_child(args, "slack", e) for e in engines if "slack" in parts]
        result += [_child(args, "discord", "sqlite")] if "discord" in parts else []
    if isinstance(result, dict):
        result["load_average"] = load_average()
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
