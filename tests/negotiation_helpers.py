"""Shared builders for the negotiation tests: a small hand-checkable scenario and scripted agents."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.types import LLMRequest
from bot.negotiation.members import load_profiles, sync_directory
from bot.negotiation.model import Allocation, AtomicTask, Preference, Scenario
from bot.negotiation.profiles import get_profile, load_profiles_file
from bot.negotiation.scripted import ScriptedNegotiator
from bot.platform.port import ChatPort
from bot.store.db import Database


def small_scenario() -> Scenario:
    """alice holds X (+3 to her) and Y (-2); bob holds Z (+4 to him) and W (-1).

    W is worth +5 to alice, Y +1 to bob: trading Y for W makes both better off.
    """
    tasks = (
        AtomicTask("X", "Expenses", "Quarter close"),
        AtomicTask("Y", "Yearly review", "Quarter close"),
        AtomicTask("Z", "Zoning permit", "Office move"),
        AtomicTask("W", "Website copy", "Office move"),
    )
    alice = {"X": Preference(5, 2), "Y": Preference(1, 3), "Z": Preference(1, 4), "W": Preference(6, 1)}
    bob = {"X": Preference(4, 2), "Y": Preference(3, 2), "Z": Preference(6, 2), "W": Preference(1, 2)}
    holder = {"X": "alice", "Y": "alice", "Z": "bob", "W": "bob"}
    return Scenario("small", "cooperative", ("alice", "bob"), tasks, {"alice": alice, "bob": bob}, Allocation(holder))


def answer(message: str, estimate: float | None = 0.5) -> str:
    return json.dumps({"message": message, "counterpart_utility_estimate": estimate})


class Replay:
    """Plays an agent from a fixed list of messages, one per call; records what it was shown."""

    def __init__(self, messages: Iterable[str]) -> None:
        self.messages = list(messages)
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> str:
        self.requests.append(request)
        return answer(self.messages.pop(0))


def replay_clients(scripts: dict[str, list[str]]) -> tuple[dict[str, LLMClient], dict[str, Replay]]:
    players = {agent: Replay(messages) for agent, messages in scripts.items()}
    return {agent: LLMClient(ScriptedBackend(player)) for agent, player in players.items()}, players


# ---------------------------------------------------------------------- members' negotiations over a chat port
SAMPLE_PROFILES = Path(__file__).parent.parent / "adapters" / "local" / "samples" / "acme-negotiation-profiles.json"


def scripted_negotiators(scenario: Scenario, agent: str) -> LLMClient:
    """A `ClientFor`: the scripted negotiator plays each member's agent."""
    return LLMClient(ScriptedBackend(ScriptedNegotiator(scenario, agent)))


async def load_sample_profiles(db: Database, port: ChatPort) -> None:
    """alice's and bob's profiles from the bundled sample (the scripted negotiators agree on a trade)."""
    assert await load_profiles(db, port, load_profiles_file(SAMPLE_PROFILES)) == 2


async def holdings(db: Database, port: ChatPort, *handles: str) -> dict[str, list[str]]:
    """The task ids each member's profile holds now."""
    directory = await sync_directory(db, port)
    async with db.session() as session:
        return {h: [t.id for t in (await get_profile(session, directory.db_ids[h], h)).tasks] for h in handles}
