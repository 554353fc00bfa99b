"""The project's retrieval paths as `benchmarks/retrieval.py` runs them: one scratch store per dataset, worlds
mirrored and indexed exactly as ingestion does (sessions, extractive summaries, MiniLM vectors)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from bot.memory.clear import ClearMemory
from bot.memory.embeddings import MiniLMEmbedder
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.hybrid import HybridMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.query import read_query, search_typed
from bot.memory.summarizer import SessionSummarizer
from bot.memory.types import FuzzyQuery, Viewer
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


if TYPE_CHECKING:
    from benchmarks.retrieval import Probe, Retrieved, WorldIndex


VARIANTS: dict[str, dict[str, Any]] = {
    "lexical_only": {"dense_weight": 0.0},
    "dense_x2": {"dense_weight": 2.0},
    "dense_half": {"dense_weight": 0.5},
    "dense_depth_20": {"dense_depth": 20},
    "lexical_depth_60": {"lexical_depth": 60},
}


class ProjectMemory:
    def __init__(self, db: Database, settings: Settings, index: VectorIndex) -> None:
        self.db = db
        self.settings = settings
        self.index = index

    @classmethod
    async def open(cls, settings: Settings, scratch: Path, embedder: MiniLMEmbedder) -> ProjectMemory:
        scratch.mkdir(parents=True, exist_ok=True)
        settings = settings.replace(data_dir=scratch)
        db = await Database.open(settings, url=f"sqlite+aiosqlite:///{scratch / 'memory.db'}")
        return cls(db, settings, VectorIndex.from_settings(settings, embedder=embedder))

    async def load(self, world: World) -> int:
        workspace_id = await mirror_world(self.db, world)
        indexer = SessionIndexer(self.db, self.settings, SessionSummarizer(self.db, None), self.index)
        await indexer.update(workspace_id)
        return workspace_id

    async def viewer(self, workspace_id: int, member: str) -> Viewer:
        async with self.db.session() as session:
            row = (
                await session.execute(
                    select(models.Member.id, models.Member.name).where(
                        models.Member.workspace_id == workspace_id, models.Member.platform_id == member
                    )
                )
            ).one()
        return Viewer(workspace_id, row[0], row[1])

    def methods(self, indexes: dict[int, WorldIndex], *, variants: bool = False) -> dict[str, Any]:
        clear, fuzzy = ClearMemory(self.db), FuzzyMemory(self.db, self.index)
        hybrid = HybridMemory(clear, self.index.windows())

        def typed(memory: Any) -> Any:
            async def run(probe: Probe) -> Retrieved:
                from benchmarks.retrieval import Retrieved

                read = read_query(probe.question, participants=participants(probe), tz=self.settings.timezone)
                hits = await search_typed(memory, probe.viewer, read, context_window=0, limit=10)
                return Retrieved([h.message.id for h in hits])

            return run

        def fuzzy_of(memory: FuzzyMemory) -> Any:
            async def run(probe: Probe) -> Retrieved:
                from benchmarks.retrieval import Retrieved

                hits = await memory.search(probe.viewer, FuzzyQuery(probe.question, top_k=10, expand=True))
                index = indexes[probe.workspace_id]
                sessions = [{index.key[m.id] for m in h.messages} for h in hits]
                # A fuzzy hit expands to its best-matching messages: those are its hits, session by session.
                return Retrieved([m.id for h in hits for m in h.matches], sessions)

            return run

        fuzzy_search = fuzzy_of(fuzzy)

        runs = {"clear": typed(clear), "hybrid": typed(hybrid), "fuzzy": fuzzy_search}
        if variants:  # the hybrid's settings around its defaults, to choose them by measurement
            for name, options in VARIANTS.items():
                runs[f"hybrid_{name}"] = typed(HybridMemory(clear, self.index.windows(), **options))
            runs["fuzzy_summaries_only"] = fuzzy_of(FuzzyMemory(self.db, self.index, by_messages=False))
        return runs

    async def close(self) -> None:
        await self.db.close()


def participants(probe: Probe) -> list[str]:
    """The names of the two people talking: the viewer and the member asked with (handles and display names)."""
    members = probe.world.members
    who = [probe.viewer_member, probe.asked_with]  # type: ignore[attr-defined]
    return [name for m in who if m in members for name in (members[m].name, members[m].display_name)]
