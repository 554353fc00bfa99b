"""FriendsQA season-1 questions: episodes 21-24 from the official dev and test files, episodes 1-20 from the partial
train subset (`partial-train/`, whose answers are plain strings without utterance ids).

Every answer is tied to the one scene utterance it was marked in: the official files name it; for the partial train
subset the answer text is aligned to the scene's spoken lines and kept only when it occurs in exactly one of them. An
answer that is a speaker's name (a who-question) is tied to that speaker's line sharing the most words with the
question, when one line shares most. Every annotated span is kept as the question's gold set (`spans`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from bot.errors import BenchDataError


FRIENDSQA_DIR = Path("sources") / "friendsqa"
# The file a question came from is its split (the file names, not the README table: dev holds e23-e24, test e21-e22).
FRIENDSQA_FILES = (("dev", FRIENDSQA_DIR / "friendsqa_dev.json"), ("test", FRIENDSQA_DIR / "friendsqa_tst.json"))
PARTIAL_SPLIT = "train-partial"
SPLITS = ("train-partial", "dev", "test")
PARTIAL_TRAIN = FRIENDSQA_DIR / "partial-train" / "friendsqa_s01_train_subset.json"
SEASON = "s01_"
NOTE = "#NOTE#"


@dataclass(frozen=True)
class Answer:
    text: str
    utterance: str  # the scene utterance the answer was marked in
    speaker: str  # its speaker as FriendsQA names them ("Ross Geller")
    is_speaker: bool = False  # the answer is the utterance's speaker, not a span of its words


@dataclass(frozen=True)
class Question:
    id: str  # "s01_e21_c12_Who"
    scene: str  # "s01_e21_c12"
    text: str
    answers: tuple[Answer, ...]
    speakers: frozenset[str] = frozenset()  # everyone who speaks in the scene (FriendsQA names)
    split: str = PARTIAL_SPLIT  # the FriendsQA file it came from: "train-partial", "dev" or "test"
    spans: tuple[str, ...] = ()  # every annotated answer text, aligned to a line or not (the gold set)


@dataclass
class LoadStats:
    questions: int = 0  # season-1 questions, paraphrased duplicates left out
    from_partial_train: int = 0  # of those, from the partial train subset (e01-e20)
    answers_unaligned: int = 0  # partial-train answers whose text is in no spoken line, or in several
    speaker_answers: int = 0  # partial-train answers that are a speaker's name, tied to one of their lines


def detokenize(text: str) -> str:
    """Undo FriendsQA's tokenization: "I 'm gon na , ca n't ." -> "I'm gonna, can't."."""
    text = re.sub(r" (n't|'[a-z]+)\b", r"\1", text)
    text = re.sub(r"\b(gon|wan|got) (na|ta)\b", r"\1\2", text)
    text = re.sub(r" ([.,!?;:])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def squash(text: str) -> str:
    """Letters and digits only, lower case: "I 'm gon na" and "i'm gonna" agree."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def load_questions(data_dir: Path, stats: LoadStats | None = None) -> list[Question]:
    """Season-1 questions (official files, then the partial train subset), paraphrased duplicates left out."""
    stats = stats if stats is not None else LoadStats()
    questions: list[Question] = []
    for split, relative in FRIENDSQA_FILES:
        for scene in _read(Path(data_dir) / relative)["data"]:
            if scene["title"].startswith(SEASON):
                questions += _official_scene(scene, split)
    partial = Path(data_dir) / PARTIAL_TRAIN
    if partial.is_file():  # optional: without it only episodes 21-24 have questions
        for scene in _read(partial):
            found = _partial_scene(scene, stats)
            questions += found
            stats.from_partial_train += len(found)
    stats.questions = len(questions)
    return questions


def _read(path: Path) -> dict | list:
    if not path.is_file():
        raise BenchDataError(f"FriendsQA data not found: {path} (check ASKWITH_BENCH_DATA_DIR).")
    return json.loads(path.read_text(encoding="utf-8"))


def _official_scene(scene: dict, split: str) -> list[Question]:
    questions = []
    for paragraph in scene["paragraphs"]:
        utterances = paragraph["utterances:"]
        speakers = frozenset(s for u in utterances for s in u["speakers"])
        for qa in paragraph["qas"]:
            if qa["id"].endswith("_Paraphrased"):
                continue
            answers = []
            for a in qa["answers"]:
                u = utterances[a["utterance_id"]]
                speaker = u["speakers"][0] if u["speakers"] else ""
                answers.append(Answer(a["answer_text"], u["utterance"], speaker, bool(a.get("is_speaker"))))
            spans = tuple(dict.fromkeys(a.text for a in answers))
            question = Question(qa["id"], scene["title"], qa["question"], tuple(answers), speakers, split, spans)
            questions.append(question)
    return questions


def _partial_scene(scene: dict, stats: LoadStats) -> list[Question]:
    lines = [line.split(": ", 1) for line in scene["dialogue"] if ": " in line]
    spoken = [(who, said) for who, said in lines if who != NOTE]
    speakers = frozenset(who for who, _ in spoken)
    questions = []
    for qa in scene["qas"]:
        if qa["id"].endswith("_Paraphrased"):
            continue
        answers = []
        spans = tuple(dict.fromkeys(qa["answers"]))
        for text in spans:
            holders = [(who, said) for who, said in spoken if squash(text) and squash(text) in squash(said)]
            if len(holders) != 1 and (line := _speaker_line(text, qa["question"], spoken)) is not None:
                stats.speaker_answers += 1
                answers.append(Answer(text, line[1], line[0], is_speaker=True))
            elif len(holders) != 1:
                stats.answers_unaligned += 1
            else:
                answers.append(Answer(text, holders[0][1], holders[0][0]))
        if answers:
            questions.append(
                Question(qa["id"], scene["title"], qa["question"], tuple(answers), speakers, PARTIAL_SPLIT, spans)
            )
    return questions


def _speaker_line(text: str, question: str, spoken: list[list[str]]) -> tuple[str, str] | None:
    """(speaker, line) of speaker `text` sharing the most words with the question, when exactly one shares most."""
    wanted = squash(text)
    lines = [(who, said) for who, said in spoken if wanted in (squash(who), squash(who.split(" ")[0]))]
    asked = set(re.findall(r"[a-z0-9]+", question.lower())) - QUESTION_WORDS
    shared = sorted(((len(asked & set(re.findall(r"[a-z0-9]+", s.lower()))), (w, s)) for w, s in lines), reverse=True)
    if not shared or shared[0][0] == 0 or (len(shared) > 1 and shared[1][0] == shared[0][0]):
        return None
    return shared[0][1]


# Words of a question that say nothing about which line it asks about.
QUESTION_WORDS = frozenset(
    "who what when where why how which whom whose is are was were do does did the a an to of in on at and or for with "
    "s t that this it he she they his her their him them".split()
)
