"""Deterministic answer extraction, the offline stand-in for the paper's GPT-4 extraction step (appendix C.3).

- a count: the number next to a word of deleting ("4 deletions", "delete 4"), else the first stand-alone number;
- activity names: vocabulary names matched on word stems ("hike" = "hiking"), negated names ("not pottery") left out;
- an accepted answer counts only when stated plainly: hedged ("either A or B", "maybe A") or negated ("not A") it
  does not, as a careful grader would mark it.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

from bot.base.text_fold import stem


NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split()
    )
}
_NUMBER_RE = re.compile(r"(?<![\d:.])\d+(?![\d:])|\b(?:" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
_DELETE_RE = re.compile(r"\b(?:delet|remov|drop|cancel|cut)\w*", re.IGNORECASE)
_NEGATION = r"\b(?:not|isnt|wasnt|arent|werent|never|no|neither|nor|without)\s+(?:\w+\s+){0,2}"
_HEDGES = re.compile(r"\b(?:either|maybe|perhaps|possibly|probably|might|not sure|unsure|could be)\b")
_CLAUSES = re.compile(r"[,.;:!?()]")
NEAR_CHARS = 30  # a number this close to a word of deleting is the count


# The chat writes an apostrophe several ways ("wonīt", "won’t"): one spelling, so "won't" matches them all.
APOSTROPHES = str.maketrans(dict.fromkeys("\u012b\u2019\u2018\u02bc\u00b4`", "'"))


def fold_apostrophes(text: str) -> str:
    return text.translate(APOSTROPHES)


def normalize(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (the SQuAD answer normalization); apostrophe variants
    read as one."""
    text = fold_apostrophes(text).lower().replace("-", " ")
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def extract_count(text: str) -> int | None:
    """The count an answer gives: the number nearest a word of deleting, else the first (times like 9:30 skipped)."""
    numbers = list(_NUMBER_RE.finditer(text))
    if not numbers:
        return None
    chosen = numbers[0]
    keywords = [m.start() for m in _DELETE_RE.finditer(text)]
    if keywords:
        distance = {m: min(min(abs(k - m.end()), abs(k - m.start())) for k in keywords) for m in numbers}
        nearest = min(numbers, key=lambda m: distance[m])
        if distance[nearest] <= NEAR_CHARS:
            chosen = nearest
    token = chosen.group(0).lower()
    return NUMBER_WORDS[token] if token in NUMBER_WORDS else int(token)


def stems(text: str) -> str:
    return " ".join(stem(word) for word in normalize(text).split())


def negated(prediction: str, key: str, *, on: Callable[[str], str] = normalize) -> bool:
    """`key` is negated in some clause of the prediction ("not pottery"; "Not woodworking: pottery." is not)."""
    pattern = re.compile(_NEGATION + re.escape(key) + r"\b")
    return any(pattern.search(on(clause)) for clause in _CLAUSES.split(prediction))


def mentioned_names(prediction: str, vocabulary: list[str]) -> set[str]:
    """Vocabulary names in the answer (on word stems, longest first, each stretch used once), negated ones left out;
    then names given by their first word alone ("a hike" for "hiking trip") when no other name starts with it."""
    text = f" {stems(prediction)} "
    found: set[str] = set()
    for name in sorted(vocabulary, key=lambda n: (-len(n), n)):
        key = stems(name)
        if key and f" {key} " in text:
            if not negated(prediction, key, on=stems):
                found.add(name)
            text = text.replace(f" {key} ", " _ ")  # a placeholder keeps the distances of negations
    for head, name in _head_words(vocabulary).items():
        if f" {head} " in text and not negated(prediction, head, on=stems):
            found.add(name)
    return found


def _head_words(vocabulary: list[str]) -> dict[str, str]:
    """First-word stems of multi-word names that start no other name and are no name of their own."""
    heads: dict[str, list[str]] = {}
    for name in vocabulary:
        words = stems(name).split()
        if len(words) > 1:
            heads.setdefault(words[0], []).append(name)
    whole = {stems(name) for name in vocabulary}
    return {head: names[0] for head, names in heads.items() if len(names) == 1 and head not in whole}


_STOPWORDS = frozenset(
    "a an the and or of to in on at is are was were it he she they i you we that this his her oh uh um ah yeah yes no"
    " well hey okay ok so just".split()
)
_SHORT_ANSWERS = re.compile(r"[,.;:!?()\n]|\b(?:first|second)\b")


def states_inside(prediction: str, spans: list[str]) -> bool:
    """Some short answer the prediction states (a clause of it, with a word beyond stop words, not hedged or negated)
    lies inside one of the spans, on word boundaries."""
    keys = [f" {normalize(span)} " for span in spans]
    for clause in _SHORT_ANSWERS.split(prediction.lower()):
        short = normalize(clause)
        if not set(short.split()) - _STOPWORDS or _HEDGES.search(short) or re.search(_NEGATION, f"{short} "):
            continue
        if any(f" {short} " in key for key in keys):
            return True
    return False


def plainly_states(prediction: str, answer: str) -> bool:
    """The answer is in the prediction, not hedged between alternatives and not negated."""
    text, key = f" {normalize(prediction)} ", normalize(answer)
    if not key or f" {key} " not in text:
        return False
    rest = text.replace(f" {key} ", " _ ")  # a hedge or negation inside the answer itself is the answer's
    hedged = _HEDGES.search(rest) or re.search(rf"\b{re.escape(key)} or\b|\bor {re.escape(key)}\b", text)
    return not hedged and not negated(prediction, key)
