"""Span answers scored as the dataset authors score them: SQuAD-style exact match and token F1 (FriendsQA's metrics)
against the best annotated span, per part, with degenerate spans left out and dumping penalised.

    parts = [PartGold("Where does Paul live?", ("across the hall",)), PartGold("Who is Paul?", ("the wine guy",))]
    span_scores("Paul is the wine guy; he lives across the hall.", parts)
    # -> SpanScores(em=0.0, f1=0.67, parts=[...]): each part read from the clause the answer gives for it

Extraction (the paper's judge reads the parts out of the answer; here a fixed rule, without the gold): the answer is
cut into lines, a line sharing content words with more than one part into sentences, and such a sentence at commas
and enumerations; each piece goes to the part whose spans it shares most content words with (ties: every tied part).
A piece sharing nothing, or only repeating the question, goes to every part; filler alone goes with its neighbour.
A part's prediction is its pieces together, so pasting more text only adds tokens a part must carry: precision,
hence F1, can only fall. A negation or hedge the span lacks ("not tonight") means the part is not stated.

A span is degenerate (never gold) when it holds no content word (stop words, pronouns, fillers: "you", "Oh, him"),
when it is only a person's name for a question not asking who ("Joey Tribbiani" for a where-question), or when it
is shorter than the question's answer type allows (a why-question wants a reason of two words or more: "Bitch.").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.bench.extraction import fold_apostrophes, normalize


FILLERS = frozenset(
    "a an the and or of to in on at is are was were be been it its he she they i you we me him her us them my your"
    " his our their this that these those there here oh uh um ah yeah yes no well hey okay ok so just like what"
    " who whom whose which one ones something someone thing things mine yours hers ours theirs myself yourself"
    " im youre hes shes theyre were weve ive youve id youd hed ill youll thats whats do does did dont doesnt didnt"
    " have has had am would could should will can shall may must gonna wanna got get not".split()
)
NEGATIONS = frozenset("not no never neither nor without isnt wasnt arent werent dont doesnt didnt cant wont".split())
HEDGES = frozenset("either maybe perhaps possibly probably might unsure".split())
MIN_TOKENS = {"why": 2}  # a reason takes a clause; other answer types may be one word ("upstairs", "Marcel")
ECHO = "<echo>"  # stands for a word that repeats the question: it counts in length, never in overlap
# Cuts, coarse to fine: lines; sentences and `;`; commas, colons and enumerations ("1)", "(2)").
_CUTS = (re.compile(r"\n"), re.compile(r"[;!?]|\.(?=\s|$)"), re.compile(r"[,:]|\(\d\)|\b\d\)"))
_WH = re.compile(r"\b(who|whom|whose|what|which|where|when|why|how)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PartGold:
    question: str
    spans: tuple[str, ...]
    names: frozenset[str] = frozenset()  # people of the item (lower case): a bare name answers only "who"


@dataclass
class SpanScores:
    em: float  # mean over parts
    f1: float  # mean over parts
    parts: list[dict[str, object]] = field(default_factory=list)


def tokens(text: str) -> list[str]:
    """SQuAD answer normalization (lower case, no punctuation or articles), apostrophe variants folded first."""
    return normalize(text).split()


def token_f1(prediction: list[str], gold: list[str]) -> float:
    common = sum((Counter(prediction) & Counter(gold)).values())
    if not common:
        return 0.0
    precision, recall = common / len(prediction), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def answer_type(question: str) -> str:
    found = _WH.search(question)
    return found.group(1).lower() if found else ""


def degenerate(span: str, question: str, names: Iterable[str] = ()) -> bool:
    """No content word; only names of people while the question does not ask who; or too short for its type."""
    words = tokens(span)
    content = [w for w in re.findall(r"[\w']+", fold_apostrophes(span)) if normalize(w) not in FILLERS | {""}]
    if not content:
        return True
    kind = answer_type(question)
    people = {n.lower() for n in names}
    # a person's name, with only more capitalised words beside it ("Joey Tribbiani"): an answer to "who" alone
    named = any(normalize(w) in people for w in content) and all(w[0].isupper() for w in content)
    if kind not in {"who", "whom", "whose"} and named:
        return True
    return len(words) < MIN_TOKENS.get(kind, 1)


def valid_spans(part: PartGold) -> list[str]:
    return [s for s in dict.fromkeys(part.spans) if not degenerate(s, part.question, part.names)]


def _content(words: list[str]) -> list[str]:
    return [w for w in words if w not in FILLERS]


def _pieces(text: str, level: int, golds: list[list[list[str]]], asked: set[str]) -> list[tuple[list[str], list[int]]]:
    """The answer's pieces, each with the parts it goes to. A piece is cut finer only while it shares content words
    with more than one part; an echo of the question, or a piece sharing nothing, goes to every part; one of filler
    words alone goes with the piece before it."""
    out: list[tuple[list[str], list[int]]] = []
    for raw in _CUTS[level].split(text) if level < len(_CUTS) else [text]:
        words = tokens(raw)
        if not words:
            continue
        content = _content(words)
        if not content:
            out.append((words, out[-1][1] if out else []))  # placed once its neighbour is known
            continue
        if all(w in asked for w in content):
            out.append(([ECHO] * len(words), list(range(len(golds)))))
            continue
        shares = [max((token_f1(content, _content(s)) for s in spans), default=0.0) for spans in golds]
        if sum(share > 0 for share in shares) > 1 and level + 1 < len(_CUTS):
            out.extend(_pieces(raw, level + 1, golds, asked))
            continue
        top = max(shares, default=0.0)
        out.append((words, [i for i, share in enumerate(shares) if share == top]))
    every = list(range(len(golds)))
    for index, (words, to) in enumerate(out):  # filler before any placed piece: with the next one, else every part
        if not to:
            following = next((t for _, t in out[index + 1 :] if t), every)
            out[index] = (words, following)
    return out


def _stated(prediction: list[str], span: list[str]) -> bool:
    """A prediction states a span only with a content word, and without a negation or hedge the span lacks."""
    extra = set(prediction) - set(span)
    return any(w not in FILLERS for w in prediction) and not extra & (NEGATIONS | HEDGES)


def _best(prediction: list[str], spans: list[list[str]]) -> tuple[float, float, int]:
    best = (0.0, 0.0, -1)
    for index, span in enumerate(spans):
        if _stated(prediction, span):
            score = (float(prediction == span), token_f1(prediction, span), index)
            best = max(best, score, key=lambda s: (s[1], s[0]))
    return best


def span_scores(answer: str, parts: list[PartGold], question: str = "") -> SpanScores:
    """Per part: EM and F1 of the clauses assigned to it against its best valid span (0 when it has none). A clause
    whose content words all come from the question (`question` and the parts' own) echoes it: it answers nothing,
    and weighs on every part."""
    golds = [[tokens(s) for s in valid_spans(p)] for p in parts]
    asked = set(tokens(" ".join([question, *(p.question for p in parts)])))
    assigned: list[list[str]] = [[] for _ in parts]
    for words, to in _pieces(answer, 0, golds, asked):
        for index in to:
            assigned[index].extend(words)
    out = []
    for part, spans, prediction in zip(parts, golds, assigned, strict=True):
        em, f1, which = _best(prediction, spans)
        span = valid_spans(part)[which] if which >= 0 else None
        dropped = len(set(part.spans)) - len(spans)
        out.append({"em": em, "f1": round(f1, 4), "span": span, "dropped_spans": dropped, "tokens": len(prediction)})
    n = len(parts) or 1
    return SpanScores(sum(p["em"] for p in out) / n, sum(p["f1"] for p in out) / n, out)  # type: ignore[misc]
