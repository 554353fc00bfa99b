"""Privacy level L2: with a private model configured, raw memory reaches only the private model.

Two fake OpenAI-compatible endpoints, reached through the real `openai` client: the main one plays the agent
protocol (the scripted model), the private one summarises sessions and extracts facts in its own words. Every request
body the main endpoint receives is searched for the workspace's message texts.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from adapters.local.workspace import LocalWorkspace
from bot.asks import models
from bot.asks.service import AskRequest, AskService
from bot.errors import MissingSettingError
from bot.llm.client import LLMClient
from bot.llm.provider import LLMClients, open_llm_clients
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import PromptView, keywords_of, scripted_model
from bot.llm.types import LLMRequest
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorIndex
from bot.settings import Settings
from bot.store import models as store_models
from bot.store.db import Database
from bot.store.world import World
from tests.conftest import mirror_world
from tests.fakes.asks import CODE_NAME, LAUNCH, QUESTION, two_fact_world
from tests.fakes.openai_server import FakeOpenAIServer


def as_request(body: dict[str, Any]) -> LLMRequest:
    """The request an endpoint sees, with its purpose read from the schema name (text calls are summaries)."""
    fmt = body.get("response_format") or {}
    purpose = (fmt.get("json_schema") or {}).get("name", "summarize_session")
    return LLMRequest(body["messages"], purpose=purpose)


def main_model(body: dict[str, Any]) -> str:
    return scripted_model(as_request(body))


def private_model(body: dict[str, Any]) -> str:
    """Summaries and facts in its own words: the content words of what it read, never a message as written."""
    request = as_request(body)
    if request.purpose == "summarize_session":
        return "Talk about " + " ".join(sorted(keywords_of(request.messages[-1]["content"])))
    view = PromptView.of(request)
    facts = []
    for line in view.block("MEMORY RESULTS"):
        if found := re.match(r"^\[([^\]]+)\] (.*)$", line):
            facts.append({"fact": " ".join(sorted(keywords_of(found[2]))), "source": found[1]})
    return json.dumps({"facts": facts})


@pytest.fixture
async def endpoints() -> AsyncIterator[tuple[FakeOpenAIServer, FakeOpenAIServer]]:
    main, private = FakeOpenAIServer(script=main_model), FakeOpenAIServer(script=private_model)
    await main.start()
    await private.start()
    try:
        yield main, private
    finally:
        await main.stop()
        await private.stop()


def split_settings(settings: Settings, main: FakeOpenAIServer, private: FakeOpenAIServer) -> Settings:
    return settings.replace(
        llm_base_url=main.base_url, llm_model="main-model", llm_max_retries=0,
        private_llm_base_url=private.base_url, private_llm_model="private-model",
    )  # fmt: skip


async def ask_service(db: Database, settings: Settings, world: World, llms: LLMClients) -> AskService:
    """An ask service whose fuzzy memory was indexed with summaries written by the model allowed to read memory."""
    workspace_id = await mirror_world(db, world)
    index = VectorIndex.from_settings(settings)
    await SessionIndexer(db, settings, SessionSummarizer(db, llms.memory_reader), index).update(workspace_id)
    memory = MemoryAccess(clear=ClearMemory(db), fuzzy=FuzzyMemory(db, index), reader=llms.private)
    return AskService(
        settings=settings, db=db, port=LocalWorkspace(world), llm=llms.main, memory=memory, workspace_id=workspace_id
    )


def texts_of(server: FakeOpenAIServer) -> str:
    return "\n".join(m["content"] for r in server.requests for m in r.body["messages"])


async def test_no_raw_message_text_reaches_the_main_model(
    db: Database, settings: Settings, endpoints: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    main, private = endpoints
    world = two_fact_world()
    raw = [m.text for messages in world.messages.values() for m in messages]  # before the ask posts its own
    settings = split_settings(settings, main, private)
    async with open_llm_clients(settings) as llms:
        service = await ask_service(db, settings, world, llms)
        outcome = await service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done", outcome.final_text
    assert "bluebird" in outcome.answer.lower() and "march" in outcome.answer.lower()
    seen_by_main = texts_of(main)
    assert main.requests and not [text for text in raw if text in seen_by_main]
    seen_by_private = texts_of(private)
    assert CODE_NAME in seen_by_private and LAUNCH in seen_by_private
    assert all(text in seen_by_private for text in raw)  # every session was summarised by the private model

    async with db.session() as session:
        calls = list((await session.execute(select(models.LLMCall))).scalars())
        summaries = list((await session.execute(select(store_models.SessionSummary))).scalars())
    by_model = {(c.purpose, c.model) for c in calls}
    assert ("extract_facts", "private-model") in by_model
    assert {model for purpose, model in by_model if purpose != "extract_facts"} == {"main-model"}
    assert summaries and {s.model for s in summaries} == {"private-model"}


async def test_without_the_split_the_main_model_reads_memory_itself(
    db: Database, settings: Settings, endpoints: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    main, private = endpoints
    settings = settings.replace(llm_base_url=main.base_url, llm_model="main-model", llm_max_retries=0)
    async with open_llm_clients(settings) as llms:
        assert llms.private is None and llms.memory_reader is llms.main
        service = await ask_service(db, settings, two_fact_world(), llms)
        outcome = await service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "done", outcome.final_text
    assert CODE_NAME in texts_of(main) and not private.requests  # the test above can fail: raw text is there


async def test_a_private_model_that_fails_gives_no_facts_and_never_hands_raw_hits_to_the_main_one(
    db: Database, settings: Settings
) -> None:
    world = two_fact_world()
    main = ScriptedBackend(scripted_model, model="main-model")
    private = ScriptedBackend(lambda request: "I cannot do JSON.", model="private-model")
    llms = LLMClients(LLMClient(main), LLMClient(private))
    service = await ask_service(db, settings, world, llms)

    outcome = await service.ask(AskRequest("alice", ["bob"], QUESTION))

    assert outcome.status == "failed" and outcome.failure  # nothing learned: a readable failure, no crash
    main_texts = "\n".join(m["content"] for r in main.requests for m in r.messages)
    assert CODE_NAME not in main_texts and LAUNCH not in main_texts
    assert "(nothing found)" in main_texts
    totals = llms.memory_reader.totals
    assert totals.by_purpose["extract_facts"] >= 2  # both agents found hits, and the private model read them
    assert set(totals.malformed) == {"invalid_json -> failed after repair"}


async def test_the_private_endpoint_needs_its_model_name(settings: Settings) -> None:
    settings = settings.replace(llm_base_url="http://127.0.0.1:9/v1", private_llm_base_url="http://127.0.0.1:9/v1")
    with pytest.raises(MissingSettingError, match="ASKWITH_PRIVATE_LLM_MODEL"):
        async with open_llm_clients(settings):
            pass
