"""The paper's metrics (appendix C.3), one function per metric, and `score_item` to pick the right one.

- NP and FriendsTV: precision, judged by an LLM with the paper's judge prompt (`prompts/bench_judge.yaml`). Without a
  judge, a template FriendsTV item scores FriendsQA's token F1 (per part, against its best annotated span, mean over
  parts; `bot.bench.answer_metrics`), and any other item a concise match: the gold stated plainly in an answer at most
  `CONCISE_EXTRA` tokens longer than it (pasting lines is no answer). Every NP/FriendsTV score's detail also carries
  EM, F1 and plain containment (`containment`, a labelled extra: it rewards pasting).
- Schedule Easy: the count the answer gives must equal the gold count.
- Schedule Medium: F1 between the activity names the answer gives (mapped onto the activity vocabulary) and the gold.
- Schedule Hard: IoU between the half-hour slots covered by the answer's time spans and the gold spans.

As in the paper, the judge model (when configured) first extracts the count, maps the names or extracts the spans;
the metric is then computed by code. Offline, `bot.bench.extraction` does the extraction by rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.base.prompts import render_prompt
from bot.bench.answer_metrics import PartGold, span_scores, tokens, valid_spans
from bot.bench.extraction import extract_count, mentioned_names, normalize, plainly_states, states_inside
from bot.bench.items import BenchItem, Metric
from bot.bench.timeslots import parse_spans, slots_of
from bot.llm.client import LLMClient
from bot.llm.types import LLMRequest


_VERDICT_RE = re.compile(r"[01]")
_DIGITS_RE = re.compile(r"\d+")


class ScoreMethod(StrEnum):
    LLM_JUDGE = "llm_judge"
    NORMALIZED_MATCH = "normalized_match"
    EXACT_COUNT = "exact_count"  # extracted by rules (offline)
    NAME_F1 = "name_f1"
    SLOT_IOU = "slot_iou"
    EXACT_COUNT_LLM = "exact_count_llm_extract"  # extracted by the judge model (the paper's protocol)
    NAME_F1_LLM = "name_f1_llm_extract"
    SLOT_IOU_LLM = "slot_iou_llm_extract"
    TOKEN_F1 = "token_f1"  # FriendsQA's metric, per part against the best annotated span
    CONCISE_MATCH = "concise_match"  # stated plainly, in an answer not much longer than the gold


CONCISE_EXTRA = 25  # tokens an answer may add to the gold (a sentence around it), beyond which it is a dump


@dataclass(frozen=True)
class Score:
    value: float  # 0..1
    method: ScoreMethod
    detail: dict[str, Any] = field(default_factory=dict)


def score_count(prediction: str, gold: int, *, found: int | None = None, method: ScoreMethod | None = None) -> Score:
    found = extract_count(prediction) if method is None else found
    return Score(float(found == gold), method or ScoreMethod.EXACT_COUNT, {"extracted": found, "gold": gold})


def score_names(
    prediction: str, gold: list[str], vocabulary: list[str], *, method: ScoreMethod = ScoreMethod.NAME_F1
) -> Score:
    predicted = mentioned_names(prediction, vocabulary)
    hits = len(predicted & set(gold))
    precision = hits / len(predicted) if predicted else 0.0
    recall = hits / len(gold) if gold else float(not predicted)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    detail = {"predicted": sorted(predicted), "gold": sorted(gold), "precision": precision, "recall": recall}
    return Score(f1, method, detail)


def score_spans(prediction: str, gold: list[str], *, method: ScoreMethod = ScoreMethod.SLOT_IOU) -> Score:
    predicted = slots_of(parse_spans(prediction))
    truth = slots_of(span for text in gold for span in parse_spans(text))
    union = predicted | truth
    iou = len(predicted & truth) / len(union) if union else 1.0
    return Score(iou, method, {"predicted_slots": len(predicted), "gold_slots": len(truth)})


def normalized_match(prediction: str, parts: list[list[str]]) -> Score:
    """Correct when, for every part, one of its accepted answers is plainly stated (not hedged, not negated), or a
    short answer the prediction states lies inside one of them ("Paul" in "tonight is with Paul the Wine Guy")."""
    matched = [any(plainly_states(prediction, a) for a in answers) or states_inside(prediction, answers)
               for answers in parts]  # fmt: skip
    return Score(float(all(matched)), ScoreMethod.NORMALIZED_MATCH, {"parts_matched": matched})


def _template(item: BenchItem) -> bool:
    return "parts" in item.gold and item.gold.get("composed_by", "template") == "template"


def part_golds(item: BenchItem) -> list[PartGold]:
    """A template FriendsTV item's parts: each with its question, every annotated span, and the item's people."""
    out = []
    for part in item.gold["parts"]:
        names = {*part.get("holders", []), *part.get("line_holders", []), *part.get("third_parties", [])}
        names |= {part.get("speaker") or "", *item.asking} - {""}
        spans = tuple(dict.fromkeys([*part.get("spans", []), *part["answers"], part["answer"]]))
        out.append(PartGold(str(part.get("question", "")), spans, frozenset(n.lower() for n in names)))
    return out


def answer_figures(item: BenchItem, prediction: str) -> dict[str, Any]:
    """EM, token F1 (FriendsQA's, per part for a template item), containment and the answer's length."""
    parts = part_golds(item) if _template(item) else [PartGold(item.question, tuple(accepted_answers(item)[0]))]
    spans = span_scores(prediction, parts, item.question)
    contained = normalized_match(prediction, accepted_answers(item)).value
    lines = len(prediction.strip().splitlines())
    return {"em": spans.em, "f1": round(spans.f1, 4), "containment": contained, "parts": spans.parts,
            "answer_tokens": len(tokens(prediction)), "answer_lines": lines}  # fmt: skip


def concise_match(item: BenchItem, prediction: str) -> Score:
    """The gold plainly stated, in an answer at most CONCISE_EXTRA tokens longer than the gold (else a dump)."""
    accepted = accepted_answers(item)[0]
    stated = [a for a in accepted if plainly_states(prediction, a)]
    concise = any(len(tokens(prediction)) <= len(tokens(a)) + CONCISE_EXTRA for a in stated)
    return Score(float(concise), ScoreMethod.CONCISE_MATCH, answer_figures(item, prediction))


def rule_score(item: BenchItem, prediction: str) -> Score:
    """The score without a judge model (floors use it too, so they compare with the runs)."""
    if item.metric in SCHEDULE_METRICS:
        return _schedule_by_rules(item, prediction)
    if _template(item):
        figures = answer_figures(item, prediction)
        return Score(figures["f1"], ScoreMethod.TOKEN_F1, figures)
    return concise_match(item, prediction)


async def judge(question: str, ground_truth: str, prediction: str, client: LLMClient) -> Score:
    prompt = render_prompt("bench_judge", "user", question=question, ground_truth=ground_truth, prediction=prediction)
    request = LLMRequest([{"role": "user", "content": prompt}], purpose="bench_judge", temperature=0.0, max_tokens=8)
    result = await client.complete(request)
    verdict = _VERDICT_RE.search(result.text)
    value = float(verdict is not None and verdict.group(0) == "1")
    return Score(value, ScoreMethod.LLM_JUDGE, {"judge_reply": result.text.strip()[:80], "model": client.model})


def accepted_answers(item: BenchItem) -> list[list[str]]:
    """Per part, the answers accepted (every part must be stated). A model-composed FriendsTV question has one
    answer of its own; a template one needs both FriendsQA parts, each any of its annotated spans."""
    if _template(item):
        return [valid_spans(part) for part in part_golds(item)]  # degenerate spans are no gold (`answer_metrics`)
    return [list(item.gold.get("alternatives", [])) + [item.gold["answer"]]]


def judge_ground_truth(item: BenchItem) -> str:
    """The ground truth the judge reads: a template FriendsTV item's every part with its valid spans, shortest first,
    as alternative wordings of that part's one answer; otherwise the gold answer."""
    if _template(item):
        parts = [sorted(spans, key=lambda s: (len(s), s)) for spans in accepted_answers(item)]
        return "; ".join(f"part {i} (any one of these wordings): " + " OR ".join(f'"{s}"' for s in spans)
                         for i, spans in enumerate(parts, 1))  # fmt: skip
    return str(item.gold["answer"])


async def extract(key: str, client: LLMClient, **variables: object) -> str:
    """The judge model's extraction reply ("none" means it found nothing)."""
    prompt = render_prompt("bench_extract", key, **variables)
    request = LLMRequest([{"role": "user", "content": prompt}], purpose="bench_extract", temperature=0.0)
    reply = (await client.complete(request)).text.strip()
    return "" if reply.lower().strip(' ."') == "none" else reply


async def score_item(item: BenchItem, prediction: str, *, judge_client: LLMClient | None = None) -> Score:
    """The paper's metric; with a judge model, extraction (Schedule) or judgement (NP, FriendsTV) is the model's."""
    if item.metric in SCHEDULE_METRICS:
        if judge_client is None or not prediction.strip():
            return _schedule_by_rules(item, prediction)
        return await _schedule_by_model(item, prediction, judge_client)
    if judge_client is not None:
        verdict = await judge(item.question, judge_ground_truth(item), prediction, judge_client)
        return Score(verdict.value, verdict.method, {**verdict.detail, **answer_figures(item, prediction)})
    return rule_score(item, prediction)


SCHEDULE_METRICS = {Metric.EXACT_COUNT, Metric.NAME_F1, Metric.SLOT_IOU}


def _schedule_by_rules(item: BenchItem, prediction: str) -> Score:
    if item.metric is Metric.EXACT_COUNT:
        return score_count(prediction, int(item.gold["count"]))
    if item.metric is Metric.NAME_F1:
        return score_names(prediction, list(item.gold["activities"]), list(item.gold["vocabulary"]))
    return score_spans(prediction, list(item.gold["spans"]))


async def _schedule_by_model(item: BenchItem, prediction: str, client: LLMClient) -> Score:
    question = item.question
    if item.metric is Metric.EXACT_COUNT:
        reply = await extract("count", client, question=question, prediction=prediction)
        digits = _DIGITS_RE.search(reply)
        found = int(digits.group(0)) if digits else None
        return score_count(reply, int(item.gold["count"]), found=found, method=ScoreMethod.EXACT_COUNT_LLM)
    if item.metric is Metric.NAME_F1:
        vocabulary = list(item.gold["vocabulary"])
        reply = await extract("names", client, question=question, prediction=prediction, vocabulary=vocabulary)
        mapped = ", ".join(n for n in vocabulary if normalize(n) in {normalize(x) for x in reply.split(",")})
        return score_names(mapped, list(item.gold["activities"]), vocabulary, method=ScoreMethod.NAME_F1_LLM)
    reply = await extract("spans", client, question=question, prediction=prediction)
    return score_spans(reply, list(item.gold["spans"]), method=ScoreMethod.SLOT_IOU_LLM)
