"""Retrieval quality and latency: does the evidence a question needs come back, and how fast.

    python benchmarks/retrieval.py                    # needs ASKWITH_BENCH_DATA_DIR
    python benchmarks/retrieval.py --json figures.json --datasets friendstv

Gold: the evidence messages of InformativeBench FriendsTV and Needle in the Persona (seed 0, built by the project's
generators) and a handful of questions on the bundled sample workspace (acme). Each item is searched on behalf of
the members who can see its evidence (the asking pair when they can, else the third party the pair would recruit),
with the question exactly as the item states it, as a user would type it.

Per method and dataset: evidence recall@5 and @10 (a hit counts when it is an evidence line, fan-out copies of one
line being the same line), the same with the ±N channel neighbours of each hit (`ctx`), p50/p95 latency. Methods:
- `clear`: the project's clear memory, query read by `bot.memory.query.read_query` (the one query function);
- `fuzzy`: the project's fuzzy memory; `session_at_5`: an evidence line lies in one of the top-5 sessions;
- `hybrid`: the project's hybrid retrieval (lexical fused with dense windows);
- `bm25`: `rank_bm25` over the viewer's visible messages, lower-cased word tokens (not the project's code);
- `dense`: brute-force cosine over MiniLM vectors of the viewer's single messages.
The hybrid path's latency on the generated 1,000,000-message workspace is `benchmarks/hybrid_scale.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402

from benchmarks import retrieval_methods as methods  # noqa: E402
from benchmarks.timing import Timings, percentile  # noqa: E402
from bot.bench.friendstv.dataset import build_friendstv_dataset  # noqa: E402
from bot.bench.items import BenchItem  # noqa: E402
from bot.bench.persona.dataset import build_persona_dataset  # noqa: E402
from bot.memory.embeddings import MiniLMEmbedder  # noqa: E402
from bot.memory.types import Viewer  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.world import World  # noqa: E402


LineKey = tuple[str, str, str]  # sender, time, text: fan-out copies of one line share it
KS = (5, 10)
WIDTHS = (1, 2, 3)  # context widths measured (ctx_w<N>_recall_at_10); --context picks the ctx_* figures
SAMPLE_GOLD = Path(__file__).with_name("retrieval_sample_gold.json")


@dataclass
class Probe:
    dataset: str
    workspace_id: int
    world: World
    viewer: Viewer
    question: str
    evidence: frozenset[LineKey]
    asked_with: str  # handle of the member the question is asked with


@dataclass
class Retrieved:
    hits: list[str]  # message platform ids, best first
    sessions: list[set[LineKey]] = field(default_factory=list)  # fuzzy: each top session's lines


# ---------------------------------------------------------------------- worlds, lines and probes
class WorldIndex:
    """One world's lines by message id, channel order (for neighbours) and who sees which channel."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.key: dict[str, LineKey] = {}
        self.position: dict[str, tuple[str, int]] = {}
        for channel_id, messages in world.messages.items():
            for index, m in enumerate(messages):
                self.key[m.id] = (m.sender_id, m.ts.astimezone(UTC).isoformat(), m.text)
                self.position[m.id] = (channel_id, index)
        self.channels_of: dict[str, set[str]] = defaultdict(set)
        for channel in world.channels.values():
            for member in channel.member_ids:
                self.channels_of[member].add(channel.id)

    def neighbours(self, message_id: str, width: int) -> list[str]:
        channel_id, index = self.position[message_id]
        messages = self.world.messages[channel_id]
        return [m.id for m in messages[max(0, index - width) : index + width + 1]]

    def visible_ids(self, member: str) -> list[str]:
        return [m.id for c in sorted(self.channels_of[member]) for m in self.world.messages.get(c, [])]


def probe_members(item: BenchItem, index: WorldIndex) -> list[str]:
    """The asking members who see some evidence; when neither does, the first member who does (the recruit)."""
    seeing = [m for m in item.asking if any(index.position[e][0] in index.channels_of[m] for e in item.evidence)]
    if seeing:
        return seeing
    holders = sorted({m for e in item.evidence for m in index.world.channels[index.position[e][0]].member_ids})
    return holders[:1]


# ---------------------------------------------------------------------- scoring
def recall(probe: Probe, index: WorldIndex, retrieved: Retrieved, k: int, width: int) -> float:
    found: set[LineKey] = set()
    for message_id in retrieved.hits[:k]:
        around = index.neighbours(message_id, width) if width else [message_id]
        found.update(index.key[m] for m in around)
    return len(found & probe.evidence) / len(probe.evidence)


def session_at(probe: Probe, retrieved: Retrieved, k: int) -> float:
    return float(any(probe.evidence & lines for lines in retrieved.sessions[:k]))


# ---------------------------------------------------------------------- baselines
TOKEN = re.compile(r"\w+")


def bm25_tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class Baselines:
    """BM25 and brute-force dense search over the messages one member sees (distinct lines only)."""

    def __init__(self, index: WorldIndex, embedder: MiniLMEmbedder, vectors: dict[str, np.ndarray]) -> None:
        self.index = index
        self.embedder = embedder
        self.vectors = vectors  # text -> unit vector
        self._corpora: dict[str, tuple[list[str], BM25Okapi, np.ndarray]] = {}

    def corpus(self, member: str) -> tuple[list[str], BM25Okapi, np.ndarray]:
        if member not in self._corpora:
            seen: dict[LineKey, str] = {}
            for message_id in self.index.visible_ids(member):
                seen.setdefault(self.index.key[message_id], message_id)
            ids = list(seen.values())
            texts = [self.index.key[i][2] for i in ids]
            matrix = np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)
            self._corpora[member] = (ids, BM25Okapi([bm25_tokens(t) or ["_"] for t in texts]), matrix)
        return self._corpora[member]

    def bm25(self, member: str, question: str, k: int) -> list[str]:
        ids, bm25, _ = self.corpus(member)
        scores = bm25.get_scores(bm25_tokens(question))
        return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]

    def dense(self, member: str, question: str, k: int) -> list[str]:
        ids, _, matrix = self.corpus(member)
        query = np.asarray(self.embedder([question])[0], dtype=np.float32)
        return [ids[i] for i in np.argsort(-(matrix @ query), kind="stable")[:k]]


async def embed_texts(embedder: MiniLMEmbedder, texts: list[str]) -> dict[str, np.ndarray]:
    distinct = list(dict.fromkeys(texts))
    vectors: dict[str, np.ndarray] = {}
    for start in range(0, len(distinct), 256):
        batch = distinct[start : start + 256]
        for text, vector in zip(batch, await asyncio.to_thread(embedder, batch), strict=True):
            vectors[text] = np.asarray(vector, dtype=np.float32)
    return vectors


# ---------------------------------------------------------------------- one dataset
Method = Callable[[Probe], Awaitable[Retrieved]]


async def measure(name: str, probes: list[Probe], indexes: dict[int, WorldIndex], runs: dict[str, Method], width: int):
    figures: dict[str, float] = {f"{name}_probes": float(len(probes))}
    for method, run in runs.items():
        if probes:
            await run(probes[0])  # warm up: lazy imports, statement caches, the model's first call
        timings = Timings()
        scores: dict[str, list[float]] = defaultdict(list)
        for probe in probes:
            async with timings.one():
                retrieved = await run(probe)
            index = indexes[probe.workspace_id]
            for k in KS:
                scores[f"recall_at_{k}"].append(recall(probe, index, retrieved, k, 0))
                scores[f"ctx_recall_at_{k}"].append(recall(probe, index, retrieved, k, width))
            for w in WIDTHS:
                scores[f"ctx_w{w}_recall_at_10"].append(recall(probe, index, retrieved, 10, w))
            if retrieved.sessions:
                for k in (3, 5):
                    scores[f"session_at_{k}"].append(session_at(probe, retrieved, k))
        for metric, values in scores.items():
            figures[f"{name}_{method}_{metric}"] = sum(values) / len(values)
        figures[f"{name}_{method}_p50_ms"] = percentile(timings.wall, 50)
        figures[f"{name}_{method}_p95_ms"] = percentile(timings.wall, 95)
    return figures


async def dataset_figures(
    name: str,
    worlds: dict[str, World],
    items: list[tuple[str, BenchItem]],
    settings: Settings,
    scratch: Path,
    width: int,
    variants: bool,
) -> dict[str, float]:
    embedder = MiniLMEmbedder()
    project = await methods.ProjectMemory.open(settings, scratch / name, embedder)
    try:
        workspace_ids = {path: await project.load(world) for path, world in worlds.items()}
        indexes = {workspace_ids[p]: WorldIndex(w) for p, w in worlds.items()}
        all_texts = [m.text for w in worlds.values() for ms in w.messages.values() for m in ms]
        vectors = await embed_texts(embedder, all_texts)
        baselines = {workspace_ids[p]: Baselines(indexes[workspace_ids[p]], embedder, vectors) for p in worlds}
        probes = await make_probes(project, name, items, worlds, workspace_ids, indexes)

        async def bm25(probe: Probe) -> Retrieved:
            return Retrieved(baselines[probe.workspace_id].bm25(probe.viewer_member, probe.question, 10))

        async def dense(probe: Probe) -> Retrieved:
            return Retrieved(baselines[probe.workspace_id].dense(probe.viewer_member, probe.question, 10))

        runs: dict[str, Method] = {**project.methods(indexes, variants=variants), "bm25": bm25, "dense": dense}
        return await measure(name, probes, indexes, runs, width)
    finally:
        await project.close()


async def make_probes(
    project: methods.ProjectMemory,
    name: str,
    items: list[tuple[str, BenchItem]],
    worlds: dict[str, World],
    workspace_ids: dict[str, int],
    indexes: dict[int, WorldIndex],
) -> list[Probe]:
    probes: list[Probe] = []
    for world_path, item in items:
        workspace_id = workspace_ids[world_path]
        index = indexes[workspace_id]
        for member in probe_members(item, index):
            evidence = frozenset(
                index.key[e] for e in item.evidence if index.position[e][0] in index.channels_of[member]
            )
            if not evidence:
                continue
            viewer = await project.viewer(workspace_id, member)
            other = item.asking[1] if member == item.asking[0] else item.asking[0]
            probe = Probe(name, workspace_id, worlds[world_path], viewer, item.question, evidence, other)
            probe.viewer_member = member  # type: ignore[attr-defined]
            probes.append(probe)
    return probes


# ---------------------------------------------------------------------- datasets
def sample_items(settings: Settings) -> tuple[dict[str, World], list[tuple[str, BenchItem]]]:
    from adapters.local.registry import SAMPLES_DIR

    world = World.load(SAMPLES_DIR / "acme.json")
    gold = json.loads(SAMPLE_GOLD.read_text())
    items = [
        BenchItem(
            f"acme-{i}",
            "acme",
            "acme",
            (g["asking"][0], g["asking"][1]),
            g["question"],
            "judge",
            {},
            tuple(g["evidence"]),
        )  # type: ignore[arg-type]
        for i, g in enumerate(gold)
    ]
    return {"acme": world}, [("acme", item) for item in items]


async def run_async(
    settings: Settings, *, width: int, datasets: list[str], store: Path | None = None, variants: bool = False
) -> dict[str, float]:
    data_dir = settings.require("bench_data_dir")
    figures: dict[str, float] = {"context_width": float(width)}
    with tempfile.TemporaryDirectory(prefix="askwith-retrieval-") as temporary:
        scratch = store or Path(temporary)
        base = settings.replace(chroma_host="")
        for name in datasets:
            if name == "friendstv":
                ds = build_friendstv_dataset(data_dir, 0)
                worlds, items = ds.worlds, [(i.world, i) for i in ds.items]
            elif name == "np":
                ds = build_persona_dataset(data_dir, 0)
                worlds, items = ds.worlds, [(i.world, i) for i in ds.items]
            else:
                worlds, items = sample_items(settings)
            figures |= await dataset_figures(name, worlds, items, base, scratch, width, variants)
    return figures


def report(figures: dict[str, float]) -> str:
    return "\n".join(f"{name:<44} {value:>10.3f}" for name, value in figures.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the figures to this JSON file")
    parser.add_argument("--context", type=int, default=1, help="neighbours on each side for the ctx_* figures")
    parser.add_argument("--datasets", default="friendstv,np,acme")
    parser.add_argument("--store", type=Path, help="keep the indexed stores here and reuse them on later runs")
    parser.add_argument("--variants", action="store_true", help="also measure hybrid settings around the defaults")
    args = parser.parse_args()
    datasets = args.datasets.split(",")
    figures = asyncio.run(
        run_async(Settings.load(), width=args.context, datasets=datasets, store=args.store, variants=args.variants)
    )
    figures["measured_at"] = datetime.now(UTC).timestamp()
    print(report(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
