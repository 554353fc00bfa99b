"""An agent's turn reads its member's channels once and gives that one reading to every search of the turn."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime

from bot.agents.ablations import Ablations
from bot.agents.memory_tools import ClearParams, FuzzyParams, MemoryTools
from bot.memory.access import MemoryAccess
from bot.memory.history import HistorySize
from bot.memory.types import ClearHit, ClearQuery, FuzzyHit, FuzzyQuery, MessageView, Viewer


VIEWER = Viewer(workspace_id=1, member_id=7, name="ann")
SEEN = {3: 1, 9: 4}


class CountingHistory:
    def __init__(self) -> None:
        self.readings = 0

    async def channels(self, viewer: Viewer) -> dict[int, int]:
        assert viewer == VIEWER
        self.readings += 1
        await asyncio.sleep(0)  # let the turn's other searches ask meanwhile
        return dict(SEEN)

    async def size(self, viewer: Viewer, **_: object) -> HistorySize:
        return HistorySize(10_000, 10_000_000, more=True)

    async def read(self, viewer: Viewer, **_: object) -> list[MessageView]:
        return []

    async def visible_ids(self, viewer: Viewer, message_ids: list[str]) -> set[str]:
        return set()


class RecordingSearch:
    def __init__(self) -> None:
        self.given: list[Mapping[int, int] | None] = []

    async def search(
        self, viewer: Viewer, query: ClearQuery | FuzzyQuery, *, visible: Mapping[int, int] | None = None
    ) -> list[ClearHit] | list[FuzzyHit]:
        self.given.append(visible)
        message = MessageView("m1", "C3", "general", "bob", datetime(2026, 5, 1, tzinfo=UTC), "the launch is in May")
        return [ClearHit(message, 1.0)] if isinstance(query, ClearQuery) else []


async def test_one_reading_of_the_members_channels_serves_every_search_of_a_turn() -> None:
    history, clear, fuzzy = CountingHistory(), RecordingSearch(), RecordingSearch()
    tools = MemoryTools(VIEWER, MemoryAccess(clear=clear, fuzzy=fuzzy, history=history), Ablations())
    await tools.run(
        [ClearParams(("launch",)), ClearParams(("may",))], [FuzzyParams("when is the launch?"), FuzzyParams("who")]
    )
    assert history.readings == 1
    assert clear.given == [SEEN, SEEN] and fuzzy.given == [SEEN, SEEN]

    await tools.run([ClearParams(("budget",))], [])  # the next turn reads them again: sight follows the platform
    assert history.readings == 2

    await tools.run([ClearParams(("launch",))], [])  # a repeated query comes from the ask's cache: nothing read
    assert history.readings == 2


async def test_without_a_history_reader_each_search_reads_the_channels_itself() -> None:
    clear = RecordingSearch()
    tools = MemoryTools(VIEWER, MemoryAccess(clear=clear, fuzzy=None), Ablations())
    await tools.run([ClearParams(("launch",))], [])
    assert clear.given == [None]


class OneSession:
    """Fuzzy memory finding one session, whose best-matching messages are m2 then m1."""

    def __init__(self) -> None:
        self.queries: list[FuzzyQuery] = []

    async def search(
        self, viewer: Viewer, query: FuzzyQuery, *, visible: Mapping[int, int] | None = None
    ) -> list[FuzzyHit]:
        self.queries.append(query)
        at = datetime(2026, 5, 1, 9, tzinfo=UTC)
        said = {i: MessageView(i, "C3", "general", "bob", at, f"{i}: the launch moved to May") for i in ("m1", "m2")}
        session = "the launch date was discussed"
        return [FuzzyHit("k1", "C3", "general", session, "extractive", 0.5, at, at, matches=(said["m2"], said["m1"]))]


async def test_a_fuzzy_hit_brings_its_summary_then_its_best_matching_messages_as_ranked() -> None:
    fuzzy = OneSession()
    tools = MemoryTools(VIEWER, MemoryAccess(clear=None, fuzzy=fuzzy, history=CountingHistory()), Ablations())
    [record] = await tools.run([], [FuzzyParams("when is the launch?")])
    assert [line.id for line in record.hits] == ["session:k1", "m2", "m1"]
    assert not fuzzy.queries[0].expand  # the whole session is not read for it
