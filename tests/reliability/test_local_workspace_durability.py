"""The local workspace file under kill -9, and a NUL character in a member's message.

Before: the world file was saved every 5 s while a post returned at once (and the ask marked it posted), so a kill -9
lost hidden-thread posts and answers; a message with a NUL answered 500 and stayed in the file, and the next start
refused it. After: each post is journaled to disk (fsync) before it returns and replayed on load; text is made
storable as it enters the world.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from adapters.local.workspace import HIDDEN_CHANNEL_ID, LocalWorkspace
from bot.settings import Settings
from bot.store.db import Database
from bot.store.sanitize import REPLACEMENT
from memory_ingest.worker import IngestWorker
from tests.fakes.asks import two_fact_world


POSTS = 400
POSTER = textwrap.dedent(
    """
    import asyncio, sys
    from adapters.local.workspace import HIDDEN_CHANNEL_ID, LocalWorkspace

    async def main() -> None:
        port = LocalWorkspace.load(sys.argv[1])
        root = await port.post(HIDDEN_CHANNEL_ID, "ask #1: alice asks bob")
        print(root, flush=True)
        for i in range(int(sys.argv[2])):
            print(await port.post(HIDDEN_CHANNEL_ID, f"turn {i}", thread_id=root), flush=True)
        await asyncio.Event().wait()  # never saves on its own: only the kill ends it

    asyncio.run(main())
    """
)


def test_every_reported_post_survives_kill_9(tmp_path: Path) -> None:
    world_file = tmp_path / "ws.json"
    LocalWorkspace(two_fact_world(), path=world_file).save()
    proc = subprocess.Popen(
        [sys.executable, "-c", POSTER, str(world_file), str(POSTS)], stdout=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    reported: list[str] = []
    deadline = time.monotonic() + 120
    try:
        assert proc.stdout is not None
        while len(reported) < POSTS // 2 and time.monotonic() < deadline:  # kill mid-stream
            line = proc.stdout.readline()
            if not line:
                break
            reported.append(line.strip())
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert len(reported) == POSTS // 2

    reloaded = LocalWorkspace.load(world_file)

    stored = {m.id for m in reloaded.world.messages[HIDDEN_CHANNEL_ID]}
    assert [i for i in reported if i not in stored] == []
    reloaded.save()  # the journal folds into the world file
    assert {m.id for m in LocalWorkspace.load(world_file).world.messages[HIDDEN_CHANNEL_ID]} >= set(reported)


async def test_a_nul_in_a_message_is_stored_and_the_workspace_still_opens(tmp_path: Path, settings: Settings) -> None:
    world_file = tmp_path / "ws.json"
    port = LocalWorkspace(two_fact_world(), path=world_file)
    port.save()
    channel = port.world.dm("alice", "bob").id

    message = await port.post_as("alice", channel, "lunch\x00 at noon \ud83d?")

    assert message.text == f"lunch{REPLACEMENT} at noon {REPLACEMENT}?"
    reopened = LocalWorkspace.load(world_file)  # as `askwith serve` does on its next start (journal replayed)
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{tmp_path / 'memory.db'}")
    try:
        report = await IngestWorker(reopened, db).run()
    finally:
        await db.close()
    assert report.messages_added >= 1
    assert any(m.text == message.text for m in reopened.world.messages[channel])
