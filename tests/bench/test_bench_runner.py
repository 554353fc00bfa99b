"""`run_bench` itself: what is scored is the agents' answer, judged NP/FriendsTV answers use the judge, and an item
whose model does not respond is left for a rerun instead of being scored 0."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from bot.bench.items import ITEMS, BenchItem, dumps, load_items
from bot.bench.results import ResultStore
from bot.bench.run_config import RunConfig
from bot.bench.runner import run_bench
from bot.llm.client import LLMClient
from bot.llm.retry import RetryPolicy
from bot.llm.scripted import Fault, FaultyBackend, ScriptedBackend
from bot.llm.standin.model import PromptView, scripted_model
from bot.llm.types import LLMRequest
from bot.settings import Settings
from tests.fakes.bench_runs import BenchRuns


def oracle(answers: dict[str, str]):  # noqa: ANN201 - a Script
    """The scripted model, except that each agent states `answers[question]` and consensus keeps that statement."""

    def script(request: LLMRequest) -> str:
        view = PromptView.of(request)
        if request.purpose == "consensus":
            lines = [line for line in view.block("STATEMENTS") if line.startswith("- ")]
            stated = [line.split(": ", 1)[-1] for line in lines if "(no answer)" not in line]
            answer = {"answer": stated[0], "agreed": True, "cited": [], "dropped": [], "answerable": True}
            return json.dumps({**answer, "claims": [], "disagreements": []})
        reply = json.loads(scripted_model(request))
        if request.purpose == "act":
            reply["answer"] = answers[view.question]
        return json.dumps(reply)

    return script


def with_distinct_questions(dataset: Path, out: Path) -> list[BenchItem]:
    """A copy of `dataset` whose questions name their item (Schedule items all ask the same question)."""
    shutil.copytree(dataset, out)
    items = [replace(i, question=f"{i.question} (case {i.id})") for i in load_items(dataset)]
    (out / ITEMS).write_text("".join(dumps(i.to_dict()) + "\n" for i in items), encoding="utf-8")
    return items


def config_for(dataset: Path, *, judge: str | None = None) -> RunConfig:
    return RunConfig.for_run(dataset, model="scripted", scripted=True, ablations=[], judge=judge)


def client(backend) -> LLMClient:  # noqa: ANN001
    return LLMClient(backend, retry=RetryPolicy(max_retries=0, backoff_s=0))


async def test_the_agents_answer_is_what_gets_scored(bench_runs: BenchRuns, tmp_path: Path) -> None:
    dataset = tmp_path / "easy"
    items = with_distinct_questions(bench_runs.dataset("schedule-easy"), dataset)[:2]
    right = client(ScriptedBackend(oracle({i.question: f"{i.gold['count']} activities" for i in items})))
    wrong = client(ScriptedBackend(oracle({i.question: f"{i.gold['count'] + 1} activities" for i in items})))
    settings = Settings(embedder="hash")

    good = await run_bench(config_for(dataset), tmp_path / "right", settings=settings, llm=right, judge=None, limit=2)
    bad = await run_bench(config_for(dataset), tmp_path / "wrong", settings=settings, llm=wrong, judge=None, limit=2)

    assert [r.score for r in good.results] == [1.0, 1.0] and good.mean_score == 1.0
    assert [r.score for r in bad.results] == [0.0, 0.0]
    assert {r.scorer for r in good.results} == {"exact_count"}
    assert all(r.answer == f"{i.gold['count']} activities" for r, i in zip(sorted_(good), items, strict=True))


def sorted_(state):  # noqa: ANN001, ANN201
    return sorted(state.results, key=lambda r: r.item_id)


async def test_np_answers_go_to_the_judge_when_one_is_given(
    bench_runs: BenchRuns, bench_data_dir: Path, tmp_path: Path
) -> None:
    dataset = bench_runs.dataset("np")
    judged: list[str] = []

    def judge_script(request: LLMRequest) -> str:
        judged.append(request.messages[0]["content"])
        return "0"  # the judge disagrees with whatever was said

    judge = client(ScriptedBackend(judge_script, model="judge-model"))
    llm = client(ScriptedBackend(scripted_model))
    state = await run_bench(
        config_for(dataset, judge="judge-model"), tmp_path, settings=Settings(embedder="hash"), llm=llm, judge=judge,
        limit=2,
    )  # fmt: skip

    assert len(judged) == 2 and all("experienced human labeler" in prompt for prompt in judged)
    assert {r.scorer for r in state.results} == {"llm_judge"} and {r.score for r in state.results} == {0.0}
    assert all(r.score_detail["model"] == "judge-model" for r in state.results)


async def test_an_item_whose_model_does_not_respond_is_left_for_a_rerun(bench_runs: BenchRuns, tmp_path: Path) -> None:
    dataset = bench_runs.dataset("schedule-hard")
    down = client(FaultyBackend(ScriptedBackend(scripted_model), lambda request, n: Fault.UNAVAILABLE))
    settings = Settings(embedder="hash")

    state = await run_bench(config_for(dataset), tmp_path, settings=settings, llm=down, judge=None, limit=2)

    assert state.retry_later == 2 and state.done == 0 and ResultStore(tmp_path).done_ids() == set()
    up = client(ScriptedBackend(scripted_model))
    again = await run_bench(config_for(dataset), tmp_path, settings=settings, llm=up, judge=None, limit=2)
    assert again.done == 2 and again.retry_later == 0 and len(ResultStore(tmp_path).done_ids()) == 2


async def test_with_a_real_model_session_summaries_are_written_by_it(bench_runs: BenchRuns, tmp_path: Path) -> None:
    """Not --scripted: fuzzy memory's session summaries come from the configured model, as in the paper."""
    summarized: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        if request.purpose == "summarize_session":
            summarized.append(request)
            return "Two people go over their plans for the day."
        return scripted_model(request)

    dataset = bench_runs.dataset("schedule-medium")
    config = RunConfig.for_run(dataset, model="some-model", scripted=False, ablations=[], judge=None)
    llm = client(ScriptedBackend(model, model="some-model"))

    state = await run_bench(config, tmp_path, settings=Settings(embedder="hash"), llm=llm, judge=None, limit=1)

    assert state.done == 1 and summarized
    assert state.results[0].llm_calls > 0  # the ask's own calls; summaries are ingestion, not the ask
