"""`askwith bench run`: ask every item of a dataset through the product's own path, score it, keep the result.

    summary = await run_bench(config, run_dir, settings=settings, llm=llm, judge=None, limit=3, concurrency=2)

Items already in the run's result store are skipped, so a killed run continues where it stopped. An item whose ask
failed only because the model did not respond is not stored either: a rerun tries it again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bot.asks.composition import AskRoot, summary_writer
from bot.asks.metrics import behaviour
from bot.asks.read_models.transcripts import load_transcript
from bot.asks.service import AskOutcome, AskRequest
from bot.bench.anonymize import anonymize_item, anonymize_world
from bot.bench.citations import cited_figures, claimed_sources
from bot.bench.items import BenchItem, load_items
from bot.bench.replay import OnIngest, Replay, Replays
from bot.bench.results import ItemResult, ResultStore
from bot.bench.run_config import RunConfig, check_resumable
from bot.bench.scoring import Score, score_item
from bot.bench.splits import ALL, describe, in_split, split_of
from bot.errors import AskRejectedError, BenchError, LLMError
from bot.llm.client import LLMClient
from bot.llm.provider import LLMClients
from bot.settings import Settings
from bot.store.db import Database
from bot.texts import failure_texts


log = logging.getLogger(__name__)
DATABASE_FILE = "bench.db"


@dataclass
class RunState:
    """What a progress display needs: counts and the running mean score over the selected items."""

    total: int  # items selected (after --limit)
    done: int = 0  # finished, including those finished by an earlier run
    skipped: int = 0  # finished by an earlier run
    retry_later: int = 0  # the model did not respond: left for a rerun
    score_sum: float = 0.0
    wall_s: float = 0.0
    results: list[ItemResult] = field(default_factory=list)  # finished by this run

    @property
    def mean_score(self) -> float | None:
        return self.score_sum / self.done if self.done else None

    def add(self, result: ItemResult) -> None:
        self.done += 1
        self.score_sum += result.score


OnItem = Callable[[RunState, ItemResult | None], None]  # called after every item (None: left for a rerun)


def run_settings(settings: Settings, run_dir: Path, config: RunConfig | None = None) -> Settings:
    """A run is self-contained: its SQLite database and vector index live in the run directory."""
    url = f"sqlite+aiosqlite:///{(run_dir / DATABASE_FILE).resolve()}"
    privacy = config.privacy_prompt if config is not None else settings.agent_privacy_prompt
    return settings.replace(
        data_dir=run_dir, database_url=url, chroma_host="", ablations="", agent_privacy_prompt=privacy
    )


async def run_bench(
    config: RunConfig,
    run_dir: Path,
    *,
    settings: Settings,
    llm: LLMClient,
    judge: LLMClient | None,
    limit: int | None = None,
    split: str = ALL,
    concurrency: int = 1,
    on_item: OnItem | None = None,
    on_ingest: OnIngest | None = None,
    private_llm: LLMClient | None = None,
) -> RunState:
    """`private_llm`: the privacy split's private model (session summaries, reading hits); None = no split."""
    run_dir = Path(run_dir)
    check_resumable(run_dir, config)
    config.save(run_dir)
    store = ResultStore(run_dir)
    items = [item for item in load_items(Path(config.dataset_dir)) if in_split(split, split_of(item))]
    if not items:
        raise BenchError(f"{config.dataset} (seed {config.seed}) has no {split} items. {describe(split)}")
    items = items[: limit if limit else None]
    state, todo = _resume(items, store)
    if not todo:
        return state
    started = time.perf_counter()
    settings = run_settings(settings, run_dir, config)
    db = await Database.open(settings)
    try:
        llms = LLMClients(llm, private_llm)
        # Fuzzy memory switched off: no sessions are indexed at all. The scripted stand-in gets extractive summaries.
        root = AskRoot.over(
            settings, db, llms, summarizer=summary_writer(llms, stand_in=config.scripted),
            fuzzy="no-fuzzy-memory" not in config.effective_ablations,
        )  # fmt: skip
        replays = Replays(
            root, dataset_dir=Path(config.dataset_dir), on_ingest=on_ingest,
            transform=anonymize_world if config.anonymize_names else None,
        )  # fmt: skip
        slots = asyncio.Semaphore(max(1, concurrency))

        async def one(item: BenchItem) -> None:
            async with slots:
                result = await run_item(item, replays, db, config=config, judge=judge)
            _record(state, store, result)
            if on_item is not None:
                on_item(state, result)

        async with asyncio.TaskGroup() as group:
            for item in todo:
                group.create_task(one(item))
    finally:
        await db.close()
    state.wall_s = time.perf_counter() - started
    return state


def _resume(items: list[BenchItem], store: ResultStore) -> tuple[RunState, list[BenchItem]]:
    """The state with the results of earlier runs counted in, and the items still to ask."""
    finished = {r.item_id: r for r in store.load_all()}
    state = RunState(total=len(items))
    for item in items:
        if item.id in finished:
            state.skipped += 1
            state.add(finished[item.id])
    return state, [item for item in items if item.id not in finished]


def _record(state: RunState, store: ResultStore, result: ItemResult | None) -> None:
    if result is None:
        state.retry_later += 1
        return
    store.save(result)
    state.add(result)
    state.results.append(result)


async def run_item(
    item: BenchItem, replays: Replays, db: Database, *, config: RunConfig, judge: LLMClient | None
) -> ItemResult | None:
    """Ask one item and score it; None when the model did not respond (worth retrying later)."""
    if config.anonymize_names:
        item = anonymize_item(item)
    replay, waited = await replays.get(item.world)
    request = AskRequest(item.asking[0], [item.asking[1]], item.question, ablations=config.effective_ablations)
    started = time.perf_counter()
    try:
        outcome = await replay.service.ask(request)
    except AskRejectedError as exc:  # a dataset naming a member the workspace cannot ask with: a broken item
        return _rejected(item, str(exc), config, waited)
    wall_s = time.perf_counter() - started
    if outcome.failure == failure_texts.failure_llm_unavailable():
        log.warning("%s: the model did not respond; left for a rerun", item.id)
        return None
    try:
        score = await score_item(item, outcome.answer or "", judge_client=judge)
    except LLMError as exc:
        log.warning("%s: the judge did not answer (%s); left for a rerun", item.id, exc)
        return None
    return await _result(item, outcome, score, replay, db, wall_s=wall_s, ingest_s=waited)


async def _result(
    item: BenchItem, outcome: AskOutcome, score: Score, replay: Replay, db: Database, *, wall_s: float, ingest_s: float
) -> ItemResult:
    transcript = await load_transcript(db, outcome.ask_id)
    cost = transcript.cost()
    return ItemResult(
        item_id=item.id, dataset=item.dataset, question=item.question, gold=str(item.gold["answer"]),
        answer=outcome.answer or "", status=outcome.status, failure=outcome.failure, score=score.value,
        scorer=score.method.value, score_detail=score.detail, ask_id=outcome.ask_id,
        ablations=list(transcript.ask.ablations), llm_calls=cost.llm_calls, prompt_tokens=cost.prompt_tokens,
        completion_tokens=cost.completion_tokens, llm_s=cost.llm_seconds, wall_s=wall_s, ingest_s=ingest_s,
        behaviour=behaviour(transcript).dict(),
        citations=cited_figures(replay.port.world, item, claimed_sources(transcript)),
    )  # fmt: skip


def _rejected(item: BenchItem, reason: str, config: RunConfig, ingest_s: float) -> ItemResult:
    return ItemResult(
        item_id=item.id, dataset=item.dataset, question=item.question, gold=str(item.gold["answer"]), answer="",
        status="error", failure=reason, score=0.0, scorer="none", score_detail={}, ask_id=None,
        ablations=config.effective_ablations, llm_calls=0, prompt_tokens=0, completion_tokens=0, llm_s=0.0,
        wall_s=0.0, ingest_s=ingest_s,
    )  # fmt: skip
