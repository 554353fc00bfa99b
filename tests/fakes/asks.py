"""Building an `AskService` over a small world for tests: local workspace, store, scripted model."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from adapters.local.workspace import ApprovalResponder, LocalWorkspace
from bot.asks.composition import AskRoot, Memory
from bot.asks.service import AskService
from bot.llm.client import LLMClient
from bot.llm.provider import LLMClients
from bot.llm.scripted import Script, ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.llm.types import LLMBackend
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.memory.fuzzy import FuzzyMemory
from bot.memory.history import WholeHistory
from bot.memory.indexer import SessionIndexer
from bot.memory.summarizer import SessionSummarizer
from bot.memory.vector_index import VectorIndex
from bot.platform.port import Channel, ChannelKind, Member, SharePolicy
from bot.platform.runtime import AskFactory
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy, World
from bot.store.world_mirror import mirror_world


QUESTION = "What is the project code name and when is the launch date?"
CODE_NAME = "The project code name is Bluebird, keep it internal."
LAUNCH = "Heads up: the launch date moved to 14 March."


@dataclass
class Harness:
    service: AskService
    port: LocalWorkspace
    backend: LLMBackend
    llm: LLMClient
    world: World


def two_fact_world(
    *, launch_with: str = "bob", policies: dict[str, MemberPolicy] | None = None, world_id: str = "T1"
) -> World:
    """alice's notes hold the code name; the launch date is in a DM between `launch_with` and erin.

    alice talks only with bob; bob talks with alice and carol; carol with bob and erin."""
    policies = {} if policies is None else policies
    world = World(id=world_id, name="test")
    for handle in ("alice", "bob", "carol", "dave", "erin"):
        world.add_member(Member(handle, handle, handle.title()), policies.get(handle, MemberPolicy()))
    world.add_channel(Channel("C-notes", "alice-notes", ChannelKind.PRIVATE, ("alice",)))
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    say = _sayer(world, start)
    say("C-notes", "alice", CODE_NAME)
    say("C-notes", "alice", "Remember to water the plants.")
    say(world.dm("alice", "bob").id, "alice", "Hi Bob, shall we meet next week about the project?")
    say(world.dm("alice", "bob").id, "bob", "Sure, Tuesday works.")
    say(world.dm("bob", "carol").id, "carol", "Bob, lunch on Friday?")
    say(world.dm("bob", "carol").id, "bob", "Yes, see you then.")
    say(world.dm(launch_with, "erin").id, "erin", LAUNCH)
    say(world.dm("dave", "erin").id, "dave", "The launch party budget is secret.")
    return world


def _sayer(world: World, start: datetime):  # noqa: ANN202
    count = [0]

    def say(channel_id: str, sender: str, text: str) -> None:
        count[0] += 1
        world.add_message(channel_id, sender, text, ts=start + timedelta(minutes=count[0]))

    return say


async def build(
    db: Database,
    world: World,
    *,
    settings: Settings,
    script: Script = scripted_model,
    backend: LLMBackend | None = None,
    latency_s: float = 0.0,
    approvals: ApprovalResponder | None = None,
    concurrency: int = 16,
    fuzzy: bool = False,
) -> Harness:
    """`fuzzy=True` also indexes the world into the real fuzzy memory (extractive summaries, hash embeddings)."""
    workspace_id = await mirror_world(db, world)
    port = LocalWorkspace(world, approval_responder=approvals)
    backend = backend or ScriptedBackend(script, latency_s=latency_s)
    llm = LLMClient.from_settings(settings.replace(llm_concurrency=concurrency), backend=backend)
    memory = MemoryAccess(
        clear=ClearMemory(db),
        fuzzy=await _fuzzy(db, settings, workspace_id) if fuzzy else None,
        history=WholeHistory(db),
    )
    service = AskService(settings=settings, db=db, port=port, llm=llm, memory=memory, workspace_id=workspace_id)
    return Harness(service, port, backend, llm, world)


async def _fuzzy(db: Database, settings: Settings, workspace_id: int) -> FuzzyMemory:
    index = VectorIndex.from_settings(settings)
    await SessionIndexer(db, settings, SessionSummarizer(db, None), index).update(workspace_id)
    return FuzzyMemory(db, index)


def never(handle: str) -> dict[str, MemberPolicy]:
    return {handle: MemberPolicy(share=SharePolicy.NEVER)}


def ask_factory(settings: Settings, db: Database, llm: LLMClient, memory: MemoryAccess) -> AskFactory:
    """What `askwith serve` hands a platform adapter to build its workspaces' asks (`AskRoot.ask_service`), over
    parts a test holds."""
    return AskRoot(settings, db, LLMClients(llm), Memory(memory, indexer=None)).ask_service
