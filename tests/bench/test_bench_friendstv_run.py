"""FriendsTV through `askwith bench run` (one shared 140-member world, ingested once), and the full five-dataset
report. The shared session fixture ingests FriendsTV's 11,593 messages (sessions, hash embeddings) once: ~7 s."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bot.bench.anonymize import anonymize_item
from bot.bench.generate import DATASETS
from bot.bench.items import load_items
from bot.bench.results import ResultStore
from bot.bench.run_config import RunConfig
from bot.bench.runner import run_bench
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.settings import Settings
from tests.bench.test_bench_run_cli import check_scripted_run
from tests.fakes.bench_runs import ITEMS, BenchRuns, invoke


def test_friendstv_items_share_one_world_ingested_once(bench_runs: BenchRuns, bench_data_dir: Path) -> None:
    rows = check_scripted_run(bench_runs.run("friendstv"), "friendstv")
    assert sum(1 for r in rows if r["ingest_s"] > 0) == 1


def test_report_over_all_five_datasets(bench_runs: BenchRuns, bench_data_dir: Path, tmp_path: Path) -> None:
    runs = [bench_runs.run(name) for name in DATASETS]

    result = invoke(bench_runs.data, "bench", "report", *map(str, runs), "--out", str(tmp_path), "--split", "all")

    assert result.exit_code == 0, result.output
    label, *scores = (tmp_path / "table1.csv").read_text().splitlines()[2].split(",")
    assert label == "scripted (not a quality figure)" and len(scores) == 5 and "" not in scores
    document = json.loads((tmp_path / "report.json").read_text())
    assert {row["dataset"] for row in document["cost"]} == set(DATASETS)
    assert all(row["items"] == ITEMS for row in document["cost"])
    assert (tmp_path / "scores.png").stat().st_size > 10_000 and (tmp_path / "cost.png").stat().st_size > 10_000
    # floors beside every score, computed from the same items; FriendsTV by hops; the rebuilt-datasets note
    assert set(document["floors"]) == set(DATASETS)
    for row in document["table1"].values():
        for cell in row.values():
            assert cell["floors"]["best"] >= max(cell["floors"]["side"].values()) and cell["scorers"]
    assert sum(document["hop_distribution"].values()) == ITEMS
    assert "like-for-like" in document["note"]
    printed = " ".join(result.output.split())
    assert "floor: constant most-frequent answer" in printed and "FriendsTV by hops needed" in printed


async def test_anonymized_names_and_the_privacy_prompt_reach_the_agents(
    bench_runs: BenchRuns, bench_data_dir: Path, tmp_path: Path
) -> None:
    dataset = bench_runs.dataset("friendstv")
    config = RunConfig.for_run(
        dataset, model="scripted", scripted=True, ablations=[], judge=None, anonymize_names=True, privacy_prompt=True
    )
    backend = ScriptedBackend(scripted_model)
    settings = Settings.load(env_file=None).replace(embedder="hash")
    await run_bench(config, tmp_path / "run", settings=settings, llm=LLMClient(backend), judge=None, limit=1)

    saved = json.loads((tmp_path / "run" / "run.json").read_text())
    assert saved["anonymize_names"] is True and saved["privacy_prompt"] is True
    systems = [r.messages[0]["content"] for r in backend.requests if r.purpose in ("think", "act")]
    assert systems and all("Protect" in s and "privacy" in s for s in systems)
    every_prompt = " ".join(m["content"] for r in backend.requests for m in r.messages).lower()
    for name in ("ross", "rachel", "monica", "chandler", "joey", "phoebe"):
        assert re.search(rf"\b{name}\b", every_prompt) is None, name  # renamed everywhere the model reads
    item = load_items(dataset)[0]
    (result,) = ResultStore(tmp_path / "run").load_all()
    assert result.question == anonymize_item(item).question
    assert config.label.endswith("[anonymized names, privacy prompt]")
