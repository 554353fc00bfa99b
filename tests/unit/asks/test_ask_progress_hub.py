"""The in-process progress hub: subscribers get the latest stage (a slow one skips intermediate stages), always the
final one, and nothing after it; a broken listener does not stop the others."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from adapters.local.workspace import LocalWorkspace
from bot.agents.progress import Stage
from bot.asks.progress import Progress, ProgressHub
from bot.texts.progress_texts import progress_stage
from tests.fakes.asks import two_fact_world


def _p(stage: Stage, detail: str = "", ask_id: int = 1) -> Progress:
    return Progress(ask_id, stage, detail, detail.title(), datetime.now(UTC))


async def test_a_slow_subscriber_gets_the_latest_stage_and_always_the_final_one() -> None:
    hub = ProgressHub()
    seen: list[Stage] = []
    subscription = hub.subscribe(1)

    async def consume() -> None:
        async for progress in subscription:
            seen.append(progress.stage)
            await asyncio.sleep(0.05)  # slower than the ask

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)
    for stage in (Stage.PLANNING, Stage.SEARCHING, Stage.TALKING, Stage.AGREEING):
        hub.publish(_p(stage, "bob"))
        await asyncio.sleep(0.01)
    hub.publish(_p(Stage.DONE))
    hub.publish(_p(Stage.PLANNING, ask_id=2))  # another ask: not this subscriber's
    await asyncio.wait_for(task, 5)
    assert seen[0] is Stage.PLANNING and seen[-1] is Stage.DONE
    assert len(seen) < 5  # intermediate stages were skipped, not queued
    assert hub.latest(1) is None and hub.latest(2).stage is Stage.PLANNING


async def test_a_late_subscriber_starts_from_the_current_stage_and_a_broken_listener_is_contained() -> None:
    hub = ProgressHub()
    calls: list[Stage] = []
    hub.listen(1, lambda p: 1 / 0)
    unsubscribe = hub.listen(1, lambda p: calls.append(p.stage))
    hub.publish(_p(Stage.TALKING, "carol"))
    subscription = hub.subscribe(1)
    first = await asyncio.wait_for(anext(subscription), 1)
    assert first.stage is Stage.TALKING and first.text == "Talking with Carol's agent…"
    unsubscribe()
    hub.publish(_p(Stage.CANCELLED))
    assert (await asyncio.wait_for(anext(subscription), 1)).stage is Stage.CANCELLED
    assert calls == [Stage.TALKING]


def test_every_stage_has_a_plain_text() -> None:
    for stage in Stage:
        text = progress_stage(stage.value, "Bob")
        assert text and "{" not in text and "*" not in text and "_" not in text
    assert progress_stage("searching") == "Searching messages…"


async def test_the_local_workspace_links_a_message_to_its_web_page() -> None:
    world = two_fact_world()
    port = LocalWorkspace(world, web_base_url="http://127.0.0.1:8000/")
    message = world.messages["C-notes"][0]
    assert await port.permalink("C-notes", message.id) == f"http://127.0.0.1:8000/workspace/C-notes#msg-{message.id}"
    assert await port.permalink("C-notes", "nope") is None
    assert await port.permalink("C-nope", message.id) is None
