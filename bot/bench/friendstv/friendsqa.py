"""FriendsQA season-1 questions (dev + test files: episodes 21-24; the train file with episodes 1-20 is missing)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bot.errors import BenchDataError


FRIENDSQA_DIR = Path("sources") / "friendsqa"
FRIENDSQA_FILES = (FRIENDSQA_DIR / "friendsqa_dev.json", FRIENDSQA_DIR / "friendsqa_tst.json")
SEASON = "s01_"


@dataclass(frozen=True)
class Answer:
    text: str
    utterance: str  # the scene utterance the answer was marked in


@dataclass(frozen=True)
class Question:
    id: str  # "s01_e21_c12_Who"
    scene: str  # "s01_e21_c12"
    text: str
    answers: tuple[Answer, ...]


def detokenize(text: str) -> str:
    """Undo FriendsQA's tokenization: "I 'm gon na , ca n't ." -> "I'm gonna, can't."."""
    text = re.sub(r" (n't|'[a-z]+)\b", r"\1", text)
    text = re.sub(r"\b(gon|wan|got) (na|ta)\b", r"\1\2", text)
    text = re.sub(r" ([.,!?;:])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def load_questions(data_dir: Path) -> list[Question]:
    """Season-1 questions, paraphrased duplicates left out, in file order."""
    questions: list[Question] = []
    for relative in FRIENDSQA_FILES:
        path = Path(data_dir) / relative
        if not path.is_file():
            raise BenchDataError(f"FriendsQA data not found: {path} (check ASKWITH_BENCH_DATA_DIR).")
        for scene in json.loads(path.read_text(encoding="utf-8"))["data"]:
            if scene["title"].startswith(SEASON):
                questions += _scene_questions(scene)
    return questions


def _scene_questions(scene: dict) -> list[Question]:
    questions = []
    for paragraph in scene["paragraphs"]:
        utterances = paragraph["utterances:"]
        for qa in paragraph["qas"]:
            if qa["id"].endswith("_Paraphrased"):
                continue
            answers = tuple(
                Answer(a["answer_text"], utterances[a["utterance_id"]]["utterance"]) for a in qa["answers"]
            )
            questions.append(Question(qa["id"], scene["title"], qa["question"], answers))
    return questions
