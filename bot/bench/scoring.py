"""The paper's metrics (appendix C.3), one function per metric, and `score_item` to pick the right one.

- NP and FriendsTV: precision, judged by an LLM with the paper's judge prompt (`prompts/bench_judge.yaml`), or by a
  normalized match (SQuAD-style normalization, the gold answer contained in the prediction) when no judge is given.
- Schedule Easy: the first stand-alone number in the answer must equal the gold count.
- Schedule Medium: F1 between the activity names mentioned in the answer (matched against the activity vocabulary,
  longest name first) and the gold names.
- Schedule Hard: IoU between the half-hour slots covered by the answer's time spans and the gold spans.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.bench.items import BenchItem, Metric
from bot.bench.timeslots import parse_spans, slots_of
from bot.llm.client import LLMClient
from bot.llm.types import LLMRequest
from bot.prompts import render_prompt


NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split()
    )
}
_NUMBER_RE = re.compile(r"(?<![\d:.])\d+(?![\d:])|\b(?:" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
_VERDICT_RE = re.compile(r"[01]")


class ScoreMethod(StrEnum):
    LLM_JUDGE = "llm_judge"
    NORMALIZED_MATCH = "normalized_match"
    EXACT_COUNT = "exact_count"
    NAME_F1 = "name_f1"
    SLOT_IOU = "slot_iou"


@dataclass(frozen=True)
class Score:
    value: float  # 0..1
    method: ScoreMethod
    detail: dict[str, Any] = field(default_factory=dict)


def normalize(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (the SQuAD answer normalization)."""
    text = text.lower().replace("-", " ")
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def extract_count(text: str) -> int | None:
    """The first stand-alone number (digits or a word up to fifteen); times like 9:30 are skipped."""
    match = _NUMBER_RE.search(text)
    if match is None:
        return None
    token = match.group(0).lower()
    return NUMBER_WORDS[token] if token in NUMBER_WORDS else int(token)


def score_count(prediction: str, gold: int) -> Score:
    found = extract_count(prediction)
    return Score(float(found == gold), ScoreMethod.EXACT_COUNT, {"extracted": found, "gold": gold})


def mentioned_names(prediction: str, vocabulary: list[str]) -> set[str]:
    """Vocabulary names in the answer, longest first, each matched stretch used once."""
    text = f" {normalize(prediction)} "
    found: set[str] = set()
    for name in sorted(vocabulary, key=lambda n: (-len(n), n)):
        key = f" {normalize(name)} "
        if key in text:
            found.add(name)
            text = text.replace(key, "  ")
    return found


def score_names(prediction: str, gold: list[str], vocabulary: list[str]) -> Score:
    predicted = mentioned_names(prediction, vocabulary)
    hits = len(predicted & set(gold))
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(gold) if gold else float(not predicted)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    detail = {"predicted": sorted(predicted), "gold": sorted(gold), "precision": precision, "recall": recall}
    return Score(f1, ScoreMethod.NAME_F1, detail)


def score_spans(prediction: str, gold: list[str]) -> Score:
    predicted = slots_of(parse_spans(prediction))
    truth = slots_of(span for text in gold for span in parse_spans(text))
    union = predicted | truth
    iou = len(predicted & truth) / len(union) if union else 1.0
    return Score(iou, ScoreMethod.SLOT_IOU, {"predicted_slots": len(predicted), "gold_slots": len(truth)})


def normalized_match(prediction: str, parts: list[list[str]]) -> Score:
    """Correct when, for every part, one of its accepted answers appears (normalized) in the prediction."""
    text = f" {normalize(prediction)} "
    matched = [any(f" {normalize(a)} " in text for a in answers if normalize(a)) for answers in parts]
    return Score(float(all(matched)), ScoreMethod.NORMALIZED_MATCH, {"parts_matched": matched})


async def judge(question: str, ground_truth: str, prediction: str, client: LLMClient) -> Score:
    prompt = render_prompt("bench_judge", "user", question=question, ground_truth=ground_truth, prediction=prediction)
    request = LLMRequest([{"role": "user", "content": prompt}], purpose="bench_judge", temperature=0.0, max_tokens=8)
    result = await client.complete(request)
    verdict = _VERDICT_RE.search(result.text)
    value = float(verdict is not None and verdict.group(0) == "1")
    return Score(value, ScoreMethod.LLM_JUDGE, {"judge_reply": result.text.strip()[:80], "model": client.model})


def accepted_answers(item: BenchItem) -> list[list[str]]:
    if "parts" in item.gold:
        return [list(part["answers"]) + [part["answer"]] for part in item.gold["parts"]]
    return [list(item.gold.get("alternatives", [])) + [item.gold["answer"]]]


async def score_item(item: BenchItem, prediction: str, *, judge_client: LLMClient | None = None) -> Score:
    if item.metric is Metric.EXACT_COUNT:
        return score_count(prediction, int(item.gold["count"]))
    if item.metric is Metric.NAME_F1:
        return score_names(prediction, list(item.gold["activities"]), list(item.gold["vocabulary"]))
    if item.metric is Metric.SLOT_IOU:
        return score_spans(prediction, list(item.gold["spans"]))
    if judge_client is not None:
        return await judge(item.question, str(item.gold["answer"]), prediction, judge_client)
    return normalized_match(prediction, accepted_answers(item))
