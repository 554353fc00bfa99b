"""Slack live memory against mirror memory on the same fake workspace, and a paced backfill under the 2025 limits.

    python benchmarks/slack_live.py [--json] [--asks 5] [--filler 400] [--backfill 300]

1. **Ask latency, live vs mirror.** The same world (the two-fact workspace plus `--filler` messages) served by the
   fake Slack Web API; the same scripted model; `--asks` asks of alice with bob, run one after another through the
   real `AskService` and `SlackPort` (real `AsyncWebClient`). Live: every search is `assistant.search.context` on the
   fake, as each member (their user tokens). Mirror: the history is ingested first (its time is printed apart) and
   searches run on askwith's own stores (full text + fuzzy over hash-embedded sessions). Printed: p50 / max seconds
   an ask takes from submit to its final post, Web API calls per ask (and of them searches), and whether each
   answer held both facts. Then, per source, the bytes of stored values that hold searched text once the asks have
   ended (every table and column scanned for runs of words of the workspace's messages, `tests.fakes.text_at_rest`;
   0 with live memory, whose records keep ids only), and the scopes the app asks for (`manifest.yml` for mirror,
   `manifest.marketplace.yml` for live; bot and user) against the scopes the fake saw its calls need.
2. **Paced backfill.** A channel of `--backfill` messages read by ingestion as a non-Marketplace distributed app:
   the fake answers `conversations.history/replies` at most once a minute and 15 messages a page (429 otherwise),
   on a fake clock the client's pacing shares, so nothing waits real minutes. Printed: simulated hours, messages
   stored, messages per hour, 429s met; and, over the same simulated time, unpaced runs every
   ASKWITH_INGEST_INTERVAL_SECONDS (what askwith did before: each run stops at its first long `Retry-After`).

What the figures do NOT show: the fake answers searches from memory in microseconds, so live latency here is
askwith's own overhead plus local HTTP, not Slack's search time (real searches add their network and search time
per call); the scripted model says nothing about answer quality; the paced rate is the posted limit by construction
(the figure shows that askwith reaches it without 429s and finishes, not that Slack serves it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from adapters.slack.client import web_client  # noqa: E402
from adapters.slack.live_search import SlackLiveSearch, hearing_in  # noqa: E402
from adapters.slack.port import SlackPort  # noqa: E402
from adapters.slack.rate_limits import InstallLimits, MethodBudgets  # noqa: E402
from bot.asks.requests import AskRequest  # noqa: E402
from bot.asks.service import AskService  # noqa: E402
from bot.llm.client import LLMClient  # noqa: E402
from bot.llm.scripted import ScriptedBackend  # noqa: E402
from bot.llm.standin.model import scripted_model  # noqa: E402
from bot.memory.access import MemoryAccess  # noqa: E402
from bot.memory.clear import ClearMemory  # noqa: E402
from bot.memory.embeddings import HashEmbedder  # noqa: E402
from bot.memory.fuzzy import FuzzyMemory  # noqa: E402
from bot.memory.indexer import SessionIndexer  # noqa: E402
from bot.memory.live import live_access  # noqa: E402
from bot.memory.summarizer import SessionSummarizer  # noqa: E402
from bot.memory.vector_index import VectorIndex  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store import models  # noqa: E402
from bot.store.chat_store import WorkspaceKey  # noqa: E402
from bot.store.db import Database  # noqa: E402
from bot.store.member_settings import MemberSettingsStore  # noqa: E402
from bot.store.user_tokens import TokenCipher, UserTokenGrant, UserTokenStore  # noqa: E402
from bot.store.world import World  # noqa: E402
from memory_ingest.worker import IngestWorker  # noqa: E402
from tests.fakes.asks import QUESTION, two_fact_world  # noqa: E402
from tests.fakes.slack_api import USER_SCOPES, FakeSlackApi  # noqa: E402
from tests.fakes.slack_history_limits import HistoryLimits  # noqa: E402
from tests.fakes.slack_search import SEARCH_SCOPES, FakeClock, FakeSlackSearch  # noqa: E402
from tests.fakes.slack_shapes import slack_world  # noqa: E402
from tests.fakes.text_at_rest import text_at_rest, word_runs  # noqa: E402


MEMBERS = ("UALICE", "UBOB", "UERIN")


@dataclass
class AskFigures:
    source: str
    asks: int
    p50_s: float
    max_s: float
    api_calls_per_ask: float
    searches_per_ask: float
    answered: int
    prepare_s: float  # mirror: ingestion before the first ask; live: 0
    messages_stored: int
    searched_bytes_at_rest: int  # bytes of stored values holding words of the workspace's messages, after the asks
    scopes_requested: dict[str, list[str]]  # the manifest's, by token kind (bot, user)
    scopes_used: dict[str, list[str]]  # those the fake saw granted calls need, by token kind


@dataclass
class BackfillFigures:
    mode: str
    messages: int
    stored: int
    simulated_h: float
    messages_per_hour: float
    refused_429: int


def _world(filler: int) -> World:
    """The two-fact workspace, with `filler` messages in bob and carol's DM (read by bob's searches too)."""
    world = slack_world(two_fact_world())
    channel = world.dm("UBOB", "UCAROL").id
    start = datetime(2026, 2, 1, tzinfo=UTC)
    for i in range(filler):
        text = f"note {i} about lunch plans and the weekly sync"
        world.add_message(channel, "UCAROL", text, ts=start + timedelta(minutes=i))
    return world


async def _settings(tmp: Path) -> Settings:
    return Settings.load(env={}, env_file=None).replace(
        data_dir=tmp, token_encryption_key=TokenCipher.new_key(), approval_timeout_seconds=5.0
    )


async def _ask_run(source: str, asks: int, filler: int, tmp: Path) -> AskFigures:
    fake = FakeSlackApi(_world(filler))
    search = FakeSlackSearch.install(fake, per_minute=10_000)
    await fake.start()
    settings = (await _settings(tmp)).replace(slack_bot_token=fake.bot_token, slack_api_url=fake.base_url)
    db = await Database.open(settings)
    try:
        tokens = UserTokenStore(db, TokenCipher.from_settings(settings))
        for member in MEMBERS:
            token = fake.grant_user_token(member, USER_SCOPES | SEARCH_SCOPES)
            scopes = tuple(sorted(USER_SCOPES | SEARCH_SCOPES))
            await tokens.save(UserTokenGrant("slack", fake.world.id, member, token, scopes))
        port = SlackPort(web_client(settings), user_tokens=tokens)
        worker = IngestWorker(port, db)
        mirror = await worker.mirror()
        for member in MEMBERS:
            await MemberSettingsStore(db).set_opted_in(WorkspaceKey("slack", fake.world.id), member, True)
        started = time.perf_counter()
        memory = await _memory(source, settings, db, port, tokens, worker, fake.world.id)
        prepare_s = time.perf_counter() - started if source == "mirror" else 0.0
        llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
        service = AskService(
            settings=settings, db=db, port=port, llm=llm, memory=memory, workspace_id=mirror.workspace_id
        )
        walls, answered = [], 0
        calls_before, searches_before = len(fake.calls), len(search.calls)
        for _ in range(asks):
            t0 = time.perf_counter()
            hearing_in("D_ALICE_ASKWITH", public=False, dm=True)  # asked in alice's DM with askwith, as a DM ask is
            outcome = await service.ask(AskRequest("alice", ["bob"], QUESTION))
            walls.append(time.perf_counter() - t0)
            answered += int("Bluebird" in outcome.final_text and "14 March" in outcome.final_text)
        async with db.session() as session:
            stored = int(await session.scalar(select(func.count()).select_from(models.Message)))
        await llm.aclose()
        at_rest = await text_at_rest(db, word_runs([m.text for m in _messages(fake.world)], exclude=[QUESTION]))
        return AskFigures(
            source, asks, statistics.median(walls), max(walls), (len(fake.calls) - calls_before) / asks,
            (len(search.calls) - searches_before) / asks, answered, prepare_s, stored,
            sum(f.size for f in at_rest), _requested(source), _used(fake),
        )  # fmt: skip
    finally:
        await db.close()
        await fake.stop()


def _messages(world: World) -> list:  # noqa: ANN202 - ChatMessage
    """The members' messages a search could return (askwith's own posts left out)."""
    return [m for c in world.channels for m in world.messages.get(c, []) if m.sender_id != world.bot_id]


def _requested(source: str) -> dict[str, list[str]]:
    manifest = "manifest.marketplace.yml" if source == "live" else "manifest.yml"
    scopes = yaml.safe_load((ROOT / manifest).read_text())["oauth_config"]["scopes"]
    return {kind: sorted(scopes.get(kind) or []) for kind in ("bot", "user")}


def _used(fake: FakeSlackApi) -> dict[str, list[str]]:
    return {kind: sorted(s for k, s in fake.scopes_used if k == kind) for kind in ("bot", "user")}


async def _memory(
    source: str, settings: Settings, db: Database, port: SlackPort, tokens: UserTokenStore, worker: IngestWorker,
    team: str,
) -> MemoryAccess:  # fmt: skip
    if source == "live":
        search = SlackLiveSearch(port.client, db, tokens, team_id=team, skip_channels=port.is_not_memory)
        return live_access(db, search)
    index = VectorIndex.from_settings(settings, embedder=HashEmbedder())
    worker.indexer = SessionIndexer(db, settings, SessionSummarizer(db, None), index)
    await worker.run()
    return MemoryAccess(clear=ClearMemory(db), fuzzy=FuzzyMemory(db, index))


async def _backfill_run(paced: bool, messages: int, tmp: Path, *, horizon_s: float = 0.0) -> BackfillFigures:
    """Paced: one ingestion run, to the end. Unpaced: a run every ASKWITH_INGEST_INTERVAL_SECONDS of simulated time,
    each stopping at its first long Retry-After, for `horizon_s` (the paced run's duration)."""
    world = slack_world(two_fact_world())
    channel = world.dm("UALICE", "UBOB").id
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(messages):
        world.add_message(channel, "UALICE", f"backfill message {i}", ts=start + timedelta(minutes=i))
    fake = FakeSlackApi(world)
    await fake.start()
    clock = FakeClock()
    fake_limits = HistoryLimits.install(fake, clock)

    async def sleep(seconds: float) -> None:
        clock.advance(seconds)

    settings = (await _settings(tmp)).replace(slack_bot_token=fake.bot_token, slack_api_url=fake.base_url)
    db = await Database.open(settings)
    try:
        tokens = UserTokenStore(db, TokenCipher.from_settings(settings))
        await tokens.save(UserTokenGrant("slack", world.id, "UALICE", fake.grant_user_token("UALICE"), ()))
        limited = InstallLimits.for_settings(settings.replace(slack_distribution="oauth"))
        limits = limited if paced else replace(limited, intervals={})
        port = SlackPort(web_client(settings), user_tokens=tokens, limits=limits,
                         budgets=MethodBudgets(clock=lambda: clock.now, sleep=sleep))  # fmt: skip
        worker = IngestWorker(port, db)
        await worker.mirror()
        await MemberSettingsStore(db).set_opted_in(WorkspaceKey("slack", world.id), "UALICE", True)
        began = clock.now
        await worker.run()
        while not paced and clock.now + settings.ingest_interval_seconds - began <= horizon_s:
            clock.advance(settings.ingest_interval_seconds)  # the schedule's next run
            await worker.run()
        hours = (clock.now - began) / 3600
        stored = await _backfilled(db)
        rate = stored / hours if hours > 0 else float("inf")
        return BackfillFigures("paced" if paced else "unpaced", messages, stored, hours, rate, fake_limits.refused)
    finally:
        await db.close()
        await fake.stop()


async def _backfilled(db: Database) -> int:
    async with db.session() as session:
        query = select(func.count()).select_from(models.Message).where(models.Message.text.like("backfill message %"))
        return int(await session.scalar(query))


async def main(args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as root:
        tmp = Path(root)
        live = await _ask_run("live", args.asks, args.filler, tmp / "live")
        mirror = await _ask_run("mirror", args.asks, args.filler, tmp / "mirror")
        paced = await _backfill_run(True, args.backfill, tmp / "paced")
        horizon_s = paced.simulated_h * 3600
        unpaced = await _backfill_run(False, args.backfill, tmp / "unpaced", horizon_s=horizon_s)
    return {"loadavg": os.getloadavg(), "asks": [asdict(live), asdict(mirror)],
            "backfill": [asdict(paced), asdict(unpaced)]}  # fmt: skip


def _print(result: dict[str, object]) -> None:
    print(f"loadavg {result['loadavg']}")
    print("source  asks  p50_s  max_s  api_calls/ask  searches/ask  answered  prepare_s  messages_stored")
    for a in result["asks"]:  # type: ignore[attr-defined]
        print(
            f"{a['source']:<7} {a['asks']:>4}  {a['p50_s']:.3f}  {a['max_s']:.3f}  {a['api_calls_per_ask']:>13.1f}  "
            f"{a['searches_per_ask']:>12.1f}  {a['answered']:>8}  {a['prepare_s']:>9.2f}  {a['messages_stored']:>15}"
        )
    print("source  searched_bytes_at_rest  scopes requested (bot/user)  used (bot/user)")
    for a in result["asks"]:  # type: ignore[attr-defined]
        asked, used = a["scopes_requested"], a["scopes_used"]
        print(f"{a['source']:<7} {a['searched_bytes_at_rest']:>22}  {len(asked['bot'])}/{len(asked['user'])}"
              f"{'':>27}{len(used['bot'])}/{len(used['user'])}")  # fmt: skip
        for kind in ("bot", "user"):
            print(f"  {kind}: used {', '.join(used[kind]) or '-'}; asked, not used: "
                  f"{', '.join(s for s in asked[kind] if s not in used[kind]) or '-'}")  # fmt: skip
    print("backfill  messages  stored  simulated_h  messages/hour  429s")
    for b in result["backfill"]:  # type: ignore[attr-defined]
        print(
            f"{b['mode']:<8}  {b['messages']:>8}  {b['stored']:>6}  {b['simulated_h']:>11.2f}  "
            f"{b['messages_per_hour']:>13.0f}  {b['refused_429']:>4}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--asks", type=int, default=5)
    parser.add_argument("--filler", type=int, default=400, help="extra messages in the workspace")
    parser.add_argument("--backfill", type=int, default=300, help="messages in the paced backfill's channel")
    options = parser.parse_args()
    figures = asyncio.run(main(options))
    if options.json:
        print(json.dumps(figures))
    else:
        _print(figures)
