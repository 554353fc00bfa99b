"""A journal line that cannot be replayed never stops the local workspace from opening.

Before: a line of valid JSON of the wrong shape (`[1,2]`), a bad `ts`, a missing key, an unknown sender or invalid
UTF-8 made `LocalWorkspace.load` (and so `askwith serve`) fail with a traceback, and a post from a sender who is not
in the channel was replayed into it. After: each bad line is skipped with a warning naming its line number and kept
aside, as written, in `<journal>.rejected`; the good lines around it are replayed.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from adapters.local.workspace import HIDDEN_CHANNEL_ID, LocalWorkspace
from tests.fakes.asks import two_fact_world


def _post(message_id: str, **changes: object) -> bytes:
    line = {
        "id": message_id, "channel_id": "C-notes", "sender_id": "alice", "ts": "2026-03-02T09:00:00+00:00",
        "text": f"note {message_id}", "thread_id": None, **changes,
    }  # fmt: skip
    return json.dumps(line).encode() + b"\n"


BAD_LINES = {
    "a JSON array": b"[1, 2]\n",
    "a bad ts": _post("j-ts", ts="next tuesday"),
    "a missing key": _post("j-key").replace(b'"sender_id": "alice", ', b""),
    "an unknown sender": _post("j-who", sender_id="mallory"),
    "a sender outside the channel": _post("j-out", sender_id="bob"),
    "invalid UTF-8": b'{"id": "j-utf", "text": "\xff\xfe"}\n',
    "a thread id that is a number": _post("j-thread", thread_id=7),
}


@pytest.mark.parametrize("kind", BAD_LINES)
def test_a_bad_line_is_skipped_named_and_kept_aside(
    tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    world_file = tmp_path / "ws.json"
    two_fact_world().save(world_file)
    journal = world_file.with_name("ws.json.journal")
    journal.write_bytes(_post("j-before") + BAD_LINES[kind] + _post("j-after"))
    with caplog.at_level(logging.WARNING):
        workspace = LocalWorkspace.load(world_file)
    texts = {m.text for m in workspace.world.messages["C-notes"]}
    assert {"note j-before", "note j-after"} <= texts
    assert not any(m.sender_id in ("bob", "mallory") for m in workspace.world.messages["C-notes"])
    assert any("line 2" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records), kind
    assert journal.with_name("ws.json.journal.rejected").read_bytes() == BAD_LINES[kind]
    caplog.clear()
    LocalWorkspace.load(world_file)  # the next start is quiet: the bad line is out of the journal
    assert not any("skipped" in r.getMessage() for r in caplog.records)


def test_the_bots_own_posts_replay_into_its_hidden_channel(tmp_path: Path) -> None:
    world_file = tmp_path / "ws.json"
    two_fact_world().save(world_file)  # a world file saved before the bot and its channel were added to it
    first = LocalWorkspace(two_fact_world(), path=world_file)
    posted = first._record(first.world.add_message(HIDDEN_CHANNEL_ID, first.world.bot_id, "ask #1"))
    reopened = LocalWorkspace.load(world_file)
    assert posted.id in {m.id for m in reopened.world.messages[HIDDEN_CHANNEL_ID]}
    assert not world_file.with_name("ws.json.journal.rejected").exists()
