"""The scene a template question is about, in words: its episode (when), its place and who speaks (who).

Offline, the template joins two FriendsQA questions asked of one scene; out of that scene "Where are they?" could be
about any of 24 episodes. The anchor names the scene without giving an answer away: a name, the place or the title
that contains one of the two parts' annotated spans is left out.

    anchor = scene_anchor(SceneInfo(21, "The One With The Fake Monica", "Central Perk"), ["Joey", ...], spans)
    # 'In season 1, episode 21 ("The One With The Fake Monica"), in the scene at Central Perk where Chandler and Joey
    #  speak'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.bench.friendstv.alignment import TRANSCRIPT
from bot.bench.friendstv.pairing import contains


_PLACE = re.compile(r"^[\[(]\s*Scene\s*:\s*([^,:.\]]+)", re.IGNORECASE)
_PARENTHESIS = re.compile(r"\s*\([^)]*\)")


@dataclass(frozen=True)
class SceneInfo:
    episode: int
    title: str  # "The One With The Fake Monica"
    place: str  # "Central Perk"; "" when the scene has no note


def scene_infos(data_dir: Path) -> dict[str, SceneInfo]:
    """Scene id ("s01_e21_c03") -> its episode, episode title and place, from the season-1 transcript."""
    season = json.loads((Path(data_dir) / TRANSCRIPT).read_text(encoding="utf-8"))
    infos = {}
    for episode in season["episodes"]:
        number = int(episode["episode_id"].split("_e")[1])
        title = _PARENTHESIS.sub("", episode["title"]).strip()
        for scene in episode["scenes"]:
            place = _PLACE.match(scene.get("scene_note") or "")
            infos[scene["scene_id"]] = SceneInfo(number, title, place.group(1).strip() if place else "")
    return infos


def scene_anchor(info: SceneInfo, speakers: Iterable[str], spans: Iterable[str], hidden: Iterable[str] = ()) -> str:
    """'In season 1, episode N ("title"), in the scene at PLACE where A, B and C speak': no span given away.
    `speakers`: the scene's speakers to name (FriendsQA names, "Chandler Bing"). `hidden`: names that must not
    appear (the "find who knows" variant): a title or place holding one is left out, and the speakers left out are
    said to be "others"."""
    spans, hidden = list(spans), list(hidden)

    def unnamed(text: str) -> bool:
        return not any(contains(text, name) for name in hidden)

    def safe(text: str) -> bool:
        return bool(text) and not any(contains(text, span) or contains(span, text) for span in spans) and unnamed(text)

    speaking = list(dict.fromkeys(short_name(s) for s in sorted(speakers)))
    names = [name for name in speaking if safe(name)]
    names += ["others"] * any(not unnamed(name) for name in speaking)
    when = f"In season 1, episode {info.episode}" + (f' ("{info.title}")' if safe(info.title) else "")
    where = f" at {info.place}" if safe(info.place) else ""
    who = f" where {_listed(names)} speak" if names else ""
    anchor = f"{when}, in the scene{where}{who}" if where or who else f"{when}, in one scene"
    return anchor if safe(anchor) else f"In season 1, episode {info.episode}, in one scene"


def short_name(name: str) -> str:
    """ "Chandler Bing" -> "Chandler"; "Mrs. Geller" stays whole."""
    first = name.split(" ")[0]
    return name if first.endswith(".") else first


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
