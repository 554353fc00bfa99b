"""The FriendsTV workspace of InformativeBench: 140 members, one DM channel per speaking pair.

Reads `FriendsTV/users.jsonl`, `FriendsTV/chats.jsonl` and `FriendsTV/s01.csv` from the benchmark data directory.
The chat rows hold one spoken line per listener (fan-out); the 4 "agent cultivate" demo rows are dropped. The
synthetic s01.csv clock restarts at every episode, so episode k (0-based) is placed on day k after the season's
first air date, and time filters mean something.
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.errors import WorkspaceError
from bot.platform.port import Member
from bot.store.world import MemberPolicy, World


DIALOGUE_ROWS = 11_593  # chats.jsonl ids 1..11593 are the season-1 dialogue; later ids are demo rows
SEASON_START = datetime(1994, 9, 22, tzinfo=UTC)
CLOCK_ZERO = datetime(1994, 9, 22)


def handle(name: str) -> str:
    """A mention-friendly handle for a character name ("mrs. bing" -> "mrs.bing")."""
    return name.strip().replace(" ", "_")


def episode_timestamps(csv_path: Path) -> list[datetime]:
    """One story timestamp per dialogue row, the episode index added as days."""
    stamps: list[datetime] = []
    episode, previous = 0, None
    with csv_path.open(newline="", encoding="utf-8") as handle_:
        for row in csv.DictReader(handle_):
            clock = datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")
            if previous is not None and clock < previous:
                episode += 1
            previous = clock
            stamps.append(SEASON_START + timedelta(days=episode) + (clock - CLOCK_ZERO))
    return stamps


def load_friendstv(data_dir: Path) -> World:
    base = Path(data_dir) / "FriendsTV"
    for name in ("users.jsonl", "chats.jsonl", "s01.csv"):
        if not (base / name).is_file():
            raise WorkspaceError(f"FriendsTV data not found: {base / name} is missing (check ASKWITH_BENCH_DATA_DIR).")
    world = World(id="friendstv", name="FriendsTV season 1")
    for line in (base / "users.jsonl").read_text(encoding="utf-8").splitlines():
        user = json.loads(line)
        world.add_member(Member(user["name"], handle(user["name"]), user["name"].title()), MemberPolicy(opted_in=True))
    stamps = episode_timestamps(base / "s01.csv")
    with (base / "chats.jsonl").open(encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            if row["id"] > DIALOGUE_ROWS:
                continue
            channel = world.dm(row["sender"], row["receiver"])
            world.add_message(
                channel.id, row["sender"], row["message"], ts=stamps[row["id"] - 1], message_id=f"ftv-{row['id']}"
            )
    return world
