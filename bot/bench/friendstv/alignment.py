"""Align the FriendsTV chat rows with the scenes of the season-1 transcript.

The chat rows carry no episode or scene id. A spoken line is fanned out into one message per listener, all with the
same story timestamp, so messages grouped by timestamp give the lines in order; the day gives the episode (see
`memory_ingest.sources.friendstv`). Lines are matched to transcript utterances in order (word overlap, a short
look-ahead), and each chat line takes the scene of its last matched utterance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bot.errors import BenchDataError
from bot.store.world import World
from memory_ingest.sources.friendstv import SEASON_START


TRANSCRIPT = Path("sources") / "friends-transcripts-fangj" / "friends_season_01_parsed.json"
LOOK_AHEAD = 25  # transcript utterances searched past the last match
MIN_OVERLAP = 0.6  # word Jaccard for a chat line to match a transcript utterance
_STAGE_RE = re.compile(r"\[[^\]]*\]|\([^)]*\)")


@dataclass(frozen=True)
class ChatLine:
    episode: int  # 1-based
    text: str  # as the chat holds it (stage directions included)
    message_ids: tuple[str, ...]  # one per listener
    scene: str = ""  # "s01_e21_c12"; "" before the first match


def spoken(text: str) -> str:
    """The words said, without bracketed stage directions."""
    return _STAGE_RE.sub(" ", text)


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", spoken(text).lower().replace("'", "")))


def chat_lines(world: World, episodes: set[int]) -> Iterator[ChatLine]:
    """Lines of the given episodes in story order (one line = the messages sharing a timestamp)."""
    by_time: dict[object, list] = {}
    for messages in world.messages.values():
        for message in messages:
            episode = (message.ts - SEASON_START).days + 1
            if episode in episodes:
                by_time.setdefault(message.ts, []).append(message)
    for ts in sorted(by_time):
        group = sorted(by_time[ts], key=lambda m: int(m.id.rsplit("-", 1)[-1]))
        yield ChatLine((ts - SEASON_START).days + 1, group[0].text, tuple(m.id for m in group))


def load_transcript(data_dir: Path) -> dict[int, list[tuple[str, str]]]:
    """Episode number -> spoken utterances as (scene id, text), in order."""
    path = Path(data_dir) / TRANSCRIPT
    if not path.is_file():
        raise BenchDataError(f"Season-1 transcript not found: {path} (check ASKWITH_BENCH_DATA_DIR).")
    season = json.loads(path.read_text(encoding="utf-8"))
    return {
        int(episode["episode_id"].split("_e")[1]): [
            (scene["scene_id"], u["transcript"])
            for scene in episode["scenes"]
            for u in scene["utterances"]
            if u["speakers"] != ["#NOTE#"]
        ]
        for episode in season["episodes"]
    }


def assign_scenes(lines: list[ChatLine], utterances: list[tuple[str, str]]) -> tuple[list[ChatLine], int]:
    """Give every line of one episode a scene; returns the lines and how many matched an utterance directly."""
    pointer, scene, matched, placed = 0, (utterances[0][0] if utterances else ""), 0, []
    for line in lines:
        said = words(line.text)
        for j in range(pointer, min(pointer + LOOK_AHEAD, len(utterances))):
            other = words(utterances[j][1])
            if said and other and len(said & other) / len(said | other) >= MIN_OVERLAP:
                pointer, scene, matched = j + 1, utterances[j][0], matched + 1
                break
        placed.append(ChatLine(line.episode, line.text, line.message_ids, scene))
    return placed, matched
