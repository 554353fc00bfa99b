"""Slack and Discord event-to-memory latency, and a large Slack backfill's memory use, kill and resume.

    python benchmarks/platform_events.py                 # 50 edits + 50 deletes, 100,000-message backfill
    python benchmarks/platform_events.py --events 20 --messages 20000 --json

1. Latency: a message is posted, then edited, then deleted on the fake Slack Web API (tests/fakes) and each change is
   delivered as a signed Events API request to the real bolt `AsyncApp`. The clock runs from the delivery until
   clear memory (a member's full-text search) shows the change, and until fuzzy memory (re-sessionized, summarized,
   embedded with the hash embedder) shows it. p50 / p95 per kind.
   The same for Discord (`discord_*` figures, from benchmarks/discord_events.py): gateway events delivered to the
   real discord.py client logged in against the fake Discord API.
2. Backfill: the fake serves one channel of N messages from its own process. An ingestion process (the real
   `SlackPort` + `IngestWorker`, SQLite) is killed with SIGKILL part-way, then a new one resumes. Reported: the peak
   RSS growth of each ingestion process (resident set sampled every 0.1 s) over its resident set when the run
   starts, messages lost (expected but not stored) and duplicated (stored twice) after the resume.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.timing import load_average, percentile  # noqa: E402
from bot.platform.port import Channel, ChannelKind, Member  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.world import MemberPolicy, World  # noqa: E402


RSS_TARGET_MB = 200.0
KILL_AT_FRACTION = 0.4
POLL_S = 0.002


# ---------------------------------------------------------------------- 1. latency through the real app
async def latency(events: int, data_dir: Path) -> dict[str, float]:
    from adapters.slack.app import build_app
    from adapters.slack.client import web_client
    from adapters.slack.port import SlackPort
    from adapters.slack.services import SlackServices
    from bot.memory.clear import ClearMemory
    from bot.memory.embeddings import HashEmbedder
    from bot.memory.fuzzy import FuzzyMemory
    from bot.memory.indexer import SessionIndexer
    from bot.memory.summarizer import SessionSummarizer
    from bot.memory.types import ClearQuery, FuzzyQuery
    from bot.memory.vector_index import VectorIndex
    from bot.memory.visibility import resolve_viewer
    from bot.store.chat_store import WorkspaceKey
    from bot.store.db import Database
    from memory_ingest.worker import IngestWorker
    from tests.fakes.slack_api import FakeSlackApi
    from tests.fakes.slack_changes import SlackChanges
    from tests.fakes.slack_requests import bolt_request, event_body

    secret = "benchmark-signing-secret"
    world = _small_world()
    fake = FakeSlackApi(world)
    await fake.start()
    settings = Settings(data_dir=data_dir, embedder="hash").replace(
        slack_bot_token=fake.bot_token, slack_signing_secret=secret, slack_api_url=fake.base_url
    )
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{data_dir / 'latency.db'}")
    indexer = SessionIndexer(
        db, settings, SessionSummarizer(db, None), VectorIndex.from_settings(settings, embedder=HashEmbedder())
    )
    port = SlackPort(web_client(settings))
    worker = IngestWorker(port, db, indexer=indexer)
    worker.live.reindex_delay_s = 0.0
    services = SlackServices(settings, db, port, asks=None, ingest=worker)  # type: ignore[arg-type]
    app = build_app(services)
    await worker.mirror()
    await services.member_settings.set_opted_in(WorkspaceKey("slack", world.id), "UBOB", True)
    await worker.run()
    async with db.session() as session:
        viewer = await resolve_viewer(session, worker.workspace_id or 0, "UBOB")
    clear, fuzzy = ClearMemory(db), FuzzyMemory(db, indexer.index)

    async def deliver(event: dict[str, Any]) -> None:
        response = await app.async_dispatch(bolt_request(secret, event_body(world.id, event)))
        assert response.status == 200, response.body  # noqa: S101 - a benchmark stops on a broken app

    async def clear_shows(word: str, present: bool) -> None:
        while bool(await clear.search(viewer, ClearQuery(keywords=(word,), context_window=0))) != present:
            await asyncio.sleep(POLL_S)

    async def fuzzy_shows(word: str, present: bool) -> None:
        while True:
            hits = await fuzzy.search(viewer, FuzzyQuery(text=word, top_k=50, expand=True))
            if any(word in m.text for h in hits for m in h.messages) == present:
                return
            await asyncio.sleep(POLL_S)

    changes = SlackChanges(fake)
    figures: dict[str, list[float]] = {k: [] for k in ("edit_clear", "edit_fuzzy", "delete_clear", "delete_fuzzy")}
    try:
        for i in range(events):
            posted = changes.post("CGENERAL", "UALICE", f"original{i} wording")
            await deliver(posted)
            await services.drain()
            await worker.live.settle()
            await _timed(figures, "edit", deliver(changes.edit("CGENERAL", posted["ts"], f"edited{i} wording")),
                         clear_shows(f"edited{i}", True), fuzzy_shows(f"edited{i}", True))  # fmt: skip
            await services.drain()
            await worker.live.settle()
            await _timed(figures, "delete", deliver(changes.delete("CGENERAL", posted["ts"])),
                         clear_shows(f"edited{i}", False), fuzzy_shows(f"edited{i}", False))  # fmt: skip
            await services.drain()
            await worker.live.settle()
    finally:
        await fake.stop()
        await db.close()
    return {f"{name}_{q}_ms": percentile(values, q) * 1000 for name, values in figures.items() for q in (50, 95)}


async def _timed(figures: dict[str, list[float]], kind: str, deliver: Any, clear: Any, fuzzy: Any) -> None:
    started = time.perf_counter()
    await deliver
    await clear
    figures[f"{kind}_clear"].append(time.perf_counter() - started)
    await fuzzy
    figures[f"{kind}_fuzzy"].append(time.perf_counter() - started)


def _small_world() -> World:
    world = World(id="TBENCH", name="Benchmark", bot_id="UBOT")
    world.add_member(Member("UBOT", "askwith", "askwith", is_bot=True), MemberPolicy(opted_in=False))
    for member in ("UALICE", "UBOB"):
        world.add_member(Member(member, member[1:].lower(), member[1:].title()), MemberPolicy(opted_in=True))
    world.add_channel(Channel("CGENERAL", "general", ChannelKind.PUBLIC, ("UALICE", "UBOB", "UBOT")))
    world.add_message("CGENERAL", "UALICE", "welcome", ts=datetime(2026, 11, 1, tzinfo=UTC))
    return world


def _big_world(messages: int) -> World:
    world = _small_world()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(messages - 1):
        world.add_message(
            "CGENERAL", ("UALICE", "UBOB")[i % 2], f"backfill message m{i} about the roadmap",
            ts=start + timedelta(seconds=i), message_id=f"b{i}",
        )  # fmt: skip
    return world


# ---------------------------------------------------------------------- 2. backfill: processes
def serve_fake(messages: int, port_file: Path) -> None:
    """Child process: the fake Slack Web API over a big world, until killed."""
    from tests.fakes.slack_api import FakeSlackApi

    async def main() -> None:
        fake = FakeSlackApi(_big_world(messages))
        port_file.write_text(await fake.start())
        await asyncio.Event().wait()

    asyncio.run(main())


def ingest_child(api_url: str, db_url: str, data_dir: Path, result_file: Path) -> None:
    """Child process: one ingestion run against the fake; writes its RSS figures (KiB) when it finishes."""
    from adapters.slack.client import web_client
    from adapters.slack.port import SlackPort
    from bot.store.chat_store import WorkspaceKey
    from bot.store.db import Database
    from bot.store.member_settings import MemberSettingsStore
    from memory_ingest.worker import IngestWorker

    async def main() -> None:
        settings = Settings(data_dir=data_dir, embedder="hash").replace(
            slack_bot_token="xoxb-fake-bot-token", slack_api_url=api_url, slack_api_max_retries=5
        )
        db = await Database.open(settings, url=db_url)
        worker = IngestWorker(SlackPort(web_client(settings)), db, page_size=200)
        await worker.mirror()
        await MemberSettingsStore(db).set_opted_in(WorkspaceKey("slack", "TBENCH"), "UBOB", True)
        start_kib = _rss_kib(os.getpid())  # resident now, everything imported and the database open
        result_file.write_text(json.dumps({"start_kib": start_kib}))
        report = await worker.run()
        figures = {"start_kib": start_kib, "end_kib": _rss_kib(os.getpid()), "added": report.messages_added}
        result_file.write_text(json.dumps(figures))
        await db.close()

    asyncio.run(main())


def backfill(messages: int, data_dir: Path) -> dict[str, float]:
    script = str(Path(__file__).resolve())
    port_file, db_path = data_dir / "fake.url", data_dir / "backfill.db"
    fake = subprocess.Popen([sys.executable, script, "--serve-fake", str(messages), str(port_file)])
    try:
        while not port_file.exists() or not port_file.read_text():
            time.sleep(0.2)
        api_url, db_url = port_file.read_text(), f"sqlite+aiosqlite:///{db_path}"
        kill_at = int(messages * KILL_AT_FRACTION)
        killed = _ingest(script, api_url, db_url, data_dir, data_dir / "first.json", kill_at=kill_at)
        stored_at_kill = _stored(db_path)[0]
        resumed = _ingest(script, api_url, db_url, data_dir, data_dir / "second.json", kill_at=None)
    finally:
        fake.send_signal(signal.SIGTERM)
        fake.wait()
    stored, distinct_texts, _ = _stored(db_path)  # every message's text is unique: texts identify messages
    return {
        "backfill_messages": messages,
        "stored_when_killed": stored_at_kill,
        "killed_run_peak_rss_growth_mb": killed["growth_mb"],
        "resumed_run_peak_rss_growth_mb": resumed["growth_mb"],
        "resumed_run_added": resumed.get("added", 0),
        "messages_lost": messages - distinct_texts,
        "messages_duplicated": stored - distinct_texts,
    }


def _ingest(script: str, api_url: str, db_url: str, data_dir: Path, result: Path, *, kill_at: int | None) -> dict:
    child = subprocess.Popen([sys.executable, script, "--ingest-child", api_url, db_url, str(data_dir), str(result)])
    peak_growth_kib = 0
    while child.poll() is None:
        time.sleep(0.1)
        if result.exists() and (start := json.loads(result.read_text()).get("start_kib")):
            peak_growth_kib = max(peak_growth_kib, _rss_kib(child.pid) - start)
        if kill_at is not None and Path(db_url.removeprefix("sqlite+aiosqlite:///")).exists():
            if _stored(Path(db_url.removeprefix("sqlite+aiosqlite:///")))[0] >= kill_at:
                child.send_signal(signal.SIGKILL)
                child.wait()
                break
    figures = json.loads(result.read_text()) if result.exists() else {}
    if "end_kib" in figures:
        peak_growth_kib = max(peak_growth_kib, figures["end_kib"] - figures["start_kib"])
    return {"growth_mb": peak_growth_kib / 1024, **figures}


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def _stored(db_path: Path) -> tuple[int, int, int]:
    """(message rows, distinct texts, distinct platform ids) stored."""
    try:
        with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30) as conn:
            row = conn.execute(
                "SELECT count(*), count(DISTINCT text), count(DISTINCT platform_id) FROM message"
            ).fetchone()
    except sqlite3.OperationalError:
        return 0, 0, 0
    return int(row[0]), int(row[1]), int(row[2])


# ---------------------------------------------------------------------- entry point
def discord_latency(events: int) -> dict[str, float]:
    """The same edit and delete latency on Discord, through the real discord.py client (benchmarks/discord_events)."""
    from benchmarks.discord_events import measure

    figures = asdict(asyncio.run(measure(events)))
    return {f"discord_{name}": value for name, value in figures.items() if name.endswith("_ms")}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-fake":
        serve_fake(int(sys.argv[2]), Path(sys.argv[3]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--ingest-child":
        ingest_child(sys.argv[2], sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50, help="edits and deletes to time (each)")
    parser.add_argument("--messages", type=int, default=100_000, help="messages in the backfilled channel")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="askwith-bench-") as tmp:
        figures: dict[str, Any] = {"load_average": load_average()}
        figures.update(asyncio.run(latency(args.events, Path(tmp) / "latency")))
        figures.update(discord_latency(args.events))
        figures.update(backfill(args.messages, Path(tmp)))
    figures["rss_target_mb"] = RSS_TARGET_MB
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for name, value in figures.items():
        print(f"{name:40} {value:>12.1f}" if isinstance(value, float) else f"{name:40} {value:>12}")


if __name__ == "__main__":
    os.environ.setdefault("ASKWITH_LOG_LEVEL", "WARNING")
    main()
