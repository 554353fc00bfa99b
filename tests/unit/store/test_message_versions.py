"""Versions of one message delivered at once (shuffled edits, a retry, a deletion racing its post), each on its own
connection as concurrent event handlers run them: the newest version by edit time wins and a deletion is final."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from datetime import timedelta

from sqlalchemy import select

from adapters.local import LocalWorkspace
from bot.store import models
from bot.store.db import Database
from bot.store.world import World
from memory_ingest.worker import IngestWorker


async def stored_texts(db: Database, platform_ids: list[str]) -> dict[str, str]:
    async with db.session() as session:
        rows = await session.execute(
            select(models.Message.platform_id, models.Message.text).where(models.Message.platform_id.in_(platform_ids))
        )
    return {platform_id: text for platform_id, text in rows.all()}


async def test_concurrent_edits_leave_the_newest_version(db: Database, sample_world: World) -> None:
    worker = IngestWorker(LocalWorkspace(sample_world), db)
    await worker.run()
    message = sample_world.messages["C-general"][0]
    versions = [(f"version {n}", message.ts + timedelta(seconds=n)) for n in range(1, 13)]
    for round_ in range(4):
        random.Random(round_).shuffle(versions)
        edits = [worker.live.edit_message(worker.workspace_id or 0, message.id, t, written_at=w) for t, w in versions]
        await asyncio.gather(*edits)
        assert await stored_texts(db, [message.id]) == {message.id: "version 12"}


async def test_a_deletion_delivered_with_its_post_is_final(db: Database, sample_world: World) -> None:
    worker = IngestWorker(LocalWorkspace(sample_world), db)
    await worker.run()
    first = sample_world.messages["C-general"][0]
    posts = [
        dataclasses.replace(first, id=f"late-{n}", ts=first.ts + timedelta(seconds=n), text=f"gone {n}")
        for n in range(24)
    ]
    work = [worker.ingest_message(p) for p in posts] + [
        worker.live.delete_messages(worker.workspace_id or 0, [p.id]) for p in posts
    ]
    random.Random(7).shuffle(work)
    await asyncio.gather(*work)
    assert await stored_texts(db, [p.id for p in posts]) == {}
