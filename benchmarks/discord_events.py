"""Event-to-memory latency on Discord: a message edit and a deletion, delivered as gateway events to the real
discord.py client (logged in against the project's fake Discord API, over HTTP on this machine), measured until
clear memory shows the change (the old words unfindable, the new ones found) and until fuzzy memory has caught up
(the sessions holding the message rebuilt, summarized and embedded again).

    python benchmarks/discord_events.py               # 50 edits and 50 deletions
    python benchmarks/discord_events.py --events 200 --json

SQLite, embedded Chroma and the hash embedder: the figures are askwith's own path (event handling, store, index),
not a language model's or a neural embedder's speed. Fuzzy figures include the live-memory core's re-index delay
(bursts coalesce; the old words are unreachable at once, their sessions dropped with the clear-memory change).
Wall-clock decides; CPU time stands beside it (a wall figure far above CPU on a loaded machine means the run waited
for a core).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.discord.bot import DiscordRuntime, start_discord  # noqa: E402
from benchmarks.timing import Timings, load_average, percentile  # noqa: E402
from bot.llm.client import LLMClient  # noqa: E402
from bot.llm.scripted import ScriptedBackend  # noqa: E402
from bot.llm.standin.model import scripted_model  # noqa: E402
from bot.memory.access import MemoryAccess  # noqa: E402
from bot.memory.clear import ClearMemory  # noqa: E402
from bot.memory.embeddings import HashEmbedder  # noqa: E402
from bot.memory.indexer import SessionIndexer  # noqa: E402
from bot.memory.summarizer import SessionSummarizer  # noqa: E402
from bot.memory.types import ClearQuery, Viewer  # noqa: E402
from bot.memory.vector_index import VectorIndex  # noqa: E402
from bot.memory.visibility import resolve_viewer  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.chat_store import WorkspaceKey  # noqa: E402
from bot.store.db import Database  # noqa: E402
from bot.store.member_settings import MemberSettingsStore  # noqa: E402
from tests.fakes.asks import ask_factory  # noqa: E402
from tests.fakes.discord_api import FakeDiscordApi  # noqa: E402
from tests.fakes.discord_gateway import FakeGateway  # noqa: E402
from tests.integration.discord.conftest import GUILD_ID, discord_world  # noqa: E402


POLL_S = 0.002
DEADLINE_S = 30.0


@dataclass
class Figures:
    events: int
    edit_to_clear_p50_ms: float
    edit_to_clear_p95_ms: float
    edit_to_fuzzy_p50_ms: float
    edit_to_fuzzy_p95_ms: float
    delete_to_clear_p50_ms: float
    delete_to_clear_p95_ms: float
    delete_to_fuzzy_p50_ms: float
    delete_to_fuzzy_p95_ms: float
    cpu_per_event_ms: float
    reindex_delay_ms: float  # the core's debounce before a fuzzy re-index (part of every fuzzy figure)
    load_average: float


@dataclass
class Bench:
    runtime: DiscordRuntime
    gateway: FakeGateway
    db: Database
    viewer: Viewer

    async def finds(self, word: str) -> bool:
        return bool(await ClearMemory(self.db).search(self.viewer, ClearQuery(keywords=(word,))))

    async def until(self, condition: Callable[[], Awaitable[bool]]) -> None:
        deadline = time.perf_counter() + DEADLINE_S
        while not await condition():
            if time.perf_counter() > deadline:
                raise TimeoutError("memory did not follow the event within 30 s")
            await asyncio.sleep(POLL_S)


async def measure(events: int) -> Figures:
    with tempfile.TemporaryDirectory() as tmp:
        world = discord_world()
        api = FakeDiscordApi(world, guild_id=GUILD_ID, owner_id=world.member_by_name("olga").id)
        await api.start()
        settings = Settings(data_dir=Path(tmp), embedder="hash", discord_bot_token=api.bot_token)
        db = await Database.open(settings)
        index = VectorIndex.from_settings(settings, embedder=HashEmbedder())
        indexer = SessionIndexer(db, settings, SessionSummarizer(db, None), index)
        llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
        memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None)
        runtime = await start_discord(
            settings, db=db, ask_service=ask_factory(settings, db, llm, memory), indexer=indexer, worker=False
        )
        try:
            bench = await _ready(runtime, FakeGateway(runtime.client, api), db)
            return await _run(bench, events)
        finally:
            await runtime.close()
            await api.stop()
            await db.close()


async def _ready(runtime: DiscordRuntime, gateway: FakeGateway, db: Database) -> Bench:
    world = gateway.api.world
    key = WorkspaceKey("discord", GUILD_ID)
    for handle in ("alice", "bob"):
        await MemberSettingsStore(db).set_opted_in(key, world.member_by_name(handle).id, True)
    gateway.connect()
    await runtime.ingest.run()
    async with db.session() as session:
        viewer = await resolve_viewer(session, runtime.ingest.workspace_id or 0, "alice")
    return Bench(runtime, gateway, db, viewer)


async def _run(bench: Bench, events: int) -> Figures:
    world = bench.gateway.api.world
    general = next(c.id for c in world.channels.values() if c.name == "general")
    alice = world.member_by_name("alice")
    live = bench.runtime.services.live
    edits_clear, edits_fuzzy, deletes_clear, deletes_fuzzy = Timings(), Timings(), Timings(), Timings()
    cpu_started = time.process_time()
    for n in range(events):
        said = bench.gateway.message(general, alice, f"benchmark line original{n}")
        await bench.until(lambda n=n: bench.finds(f"original{n}"))
        await live.settled()
        async with edits_fuzzy.one():
            async with edits_clear.one():
                edited = bench.gateway.edit(said, f"benchmark line edited{n}")
                await bench.until(lambda n=n: _swapped(bench, f"original{n}", f"edited{n}"))
            await _settled(bench)
        async with deletes_fuzzy.one():
            async with deletes_clear.one():
                bench.gateway.delete(edited)
                await bench.until(lambda n=n: _gone(bench, f"edited{n}"))
            await _settled(bench)
    cpu_ms = (time.process_time() - cpu_started) * 1000 / (2 * events)
    return Figures(
        events,
        round(percentile(edits_clear.wall, 50), 1),
        round(percentile(edits_clear.wall, 95), 1),
        round(percentile(edits_fuzzy.wall, 50), 1),
        round(percentile(edits_fuzzy.wall, 95), 1),
        round(percentile(deletes_clear.wall, 50), 1),
        round(percentile(deletes_clear.wall, 95), 1),
        round(percentile(deletes_fuzzy.wall, 50), 1),
        round(percentile(deletes_fuzzy.wall, 95), 1),
        round(cpu_ms, 1),
        live.memory.reindex_delay_s * 1000,
        round(load_average(), 1),
    )


async def _swapped(bench: Bench, old: str, new: str) -> bool:
    return await bench.finds(new) and not await bench.finds(old)


async def _gone(bench: Bench, word: str) -> bool:
    return not await bench.finds(word)


async def _settled(bench: Bench) -> None:
    """Every event handler done, then fuzzy memory re-indexed."""
    while handlers := [t for t in asyncio.all_tasks() if t.get_name().startswith("discord.py: ") and not t.done()]:
        await asyncio.gather(*handlers, return_exceptions=True)
    await bench.runtime.services.live.settled()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=50, help="edits and deletions to time (each)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = asyncio.run(measure(args.events))
    if args.json:
        print(json.dumps(asdict(figures), indent=2))
        return
    print(f"Discord event -> memory, {figures.events} edits and {figures.events} deletions (wall ms, p50 / p95)")
    print(f"  edit   -> clear memory   {figures.edit_to_clear_p50_ms:8.1f} / {figures.edit_to_clear_p95_ms:8.1f}")
    print(f"  edit   -> fuzzy memory   {figures.edit_to_fuzzy_p50_ms:8.1f} / {figures.edit_to_fuzzy_p95_ms:8.1f}")
    print(f"  delete -> clear memory   {figures.delete_to_clear_p50_ms:8.1f} / {figures.delete_to_clear_p95_ms:8.1f}")
    print(f"  delete -> fuzzy memory   {figures.delete_to_fuzzy_p50_ms:8.1f} / {figures.delete_to_fuzzy_p95_ms:8.1f}")
    print(f"  CPU per event {figures.cpu_per_event_ms:.1f} ms; fuzzy figures include the core's re-index delay of "
          f"{figures.reindex_delay_ms:.0f} ms; load average {figures.load_average:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
