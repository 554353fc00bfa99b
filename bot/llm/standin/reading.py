"""How the offline stand-in model (`bot.llm.standin.model`) reads a prompt: its upper-case labels, the questions
a question contains, the memory lines it shows, and whether a line fills a rationale. Only the prompt is read."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from bot.base.prompts import CUT, DATA_CLOSE, DATA_OPEN
from bot.base.text_fold import stem, stems_of
from bot.llm.types import LLMRequest


STOPWORDS = frozenset(
    "a an and are at be by can could did do does for from has have how i in is it me my of on or our please tell "
    "that the their them there they this to us was we were what when where which who whom why will with would you "
    "your know about any find out had been being".split()
)
HIT = re.compile(
    r"^\[(?P<id>[^\]]+)\] #(?P<channel>\S+) (?:(?P<when>\S+ \S+) (?P<sender>[^:]+)|\S+): "
    r"(?P<text>.*?)(?: \| context: .*)?$"
)
FACT = re.compile(r"^\[(?P<id>[^\]]+)\] (?P<channel>)(?P<sender>)(?P<text>.+)$")  # the private model's fact line
BRIEF = re.compile(r"^- (?P<id>\S+) #(?P<channel>\S+) (?P<sender>[^:]*): (?P<text>.*)$")  # a think NOTEBOOK line
_LABEL = re.compile(r"^[A-Z][\w-]*:\s+")  # a sentence's leading one-word label ("Q:", "Note:", "Second:")
_QUESTION_WORD = r"(?:who|whom|whose|what|when|where|which|why|how)"


@dataclass
class PromptView:
    question: str
    me: str
    text: str  # every message of the request
    instruction: str  # the last user message: the think/act/consensus instruction
    heard: list[tuple[str, str]]  # (speaker, utterance) from other agents, oldest first
    said: list[str]  # this agent's own earlier utterances

    @classmethod
    def of(cls, request: LLMRequest) -> PromptView:
        text = "\n".join(m["content"] for m in request.messages)
        heard, said = [], []
        for m in request.messages[1:-1]:
            if m["role"] == "assistant":
                said.append(m["content"])
            elif found := re.match(r"^(\S+)'s agent: (.*)$", m["content"], re.S):
                heard.append((found[1], found[2].replace(DATA_OPEN, "").replace(DATA_CLOSE, "").strip()))
        me = re.search(r"YOU ARE: (\S+)'s agent", text)
        return cls(label_of(text, "QUESTION"), me[1] if me else "", text, request.messages[-1]["content"], heard, said)

    def block(self, label: str, *, anywhere: bool = False) -> list[str]:
        """Lines under `LABEL:` up to the next blank or upper-case label line (in the instruction, or anywhere)."""
        lines = (self.text if anywhere else self.instruction).splitlines()
        start = next((i for i, line in enumerate(lines) if line.startswith(label + ":")), None)
        if start is None:
            return []
        out = []
        for line in lines[start + 1 :]:
            if not line.strip() or re.match(r"^[A-Z][A-Z -]+:", line) or line[0].isalpha() and line[0].isupper():
                break
            out.append(line.strip())
        return out

    @property
    def whole_history(self) -> bool:
        return "whole chat history" in self.instruction


def label_of(text: str, label: str) -> str:
    found = re.search(rf"^{label}: (.*)$", text, re.M)
    return found[1].strip() if found else ""


def plan_of(view: PromptView) -> list[dict[str, str]]:
    """The PLAN line's rationales (the JSON inside its data block)."""
    raw = label_of(view.instruction, "PLAN").replace(DATA_OPEN, "").replace(DATA_CLOSE, "").strip()
    return json.loads(raw or "[]")


def needs_of(question: str) -> list[str]:
    """The questions a question contains: the items of a numbered list ("1) … 2) …"), else each sentence that asks
    something, without a leading one-word label and split again at "and" + a question word; without any, the first
    sentence. General sentence and enumeration rules only: no benchmark's template."""
    text = " ".join(question.split())
    parts = re.split(r"(?:^|\s)\(?\d+[).]\s+", text)
    if len(parts) > 1:
        return [need for part in parts[1:] if (need := _clean(_sentences(part)[0] if part else ""))]
    sentences = [_LABEL.sub("", s) for s in _sentences(text)]
    asking = [s for s in sentences if s.endswith("?")] or sentences[:1]
    split = [p for s in asking for p in re.split(rf",?\s+and\s+(?={_QUESTION_WORD}\b)", s, flags=re.I)]
    return [need for p in split if (need := _clean(p))]


def _sentences(text: str) -> list[str]:
    """Sentences, not cut after a short capitalised abbreviation ("Dr. Oberman", "Mrs. Geller")."""
    ends = r"(?<=[?.!])(?<![A-Z]\.)(?<![A-Z][a-z]\.)(?<![A-Z][a-z]{2}\.)\s+(?=[A-Z(])"
    return [s.strip() for s in re.split(ends, text) if s.strip()]


def _clean(part: str) -> str:
    part = part.strip().rstrip("?.! ")
    return part if keywords_of(part) else ""


def keywords_of(text: str) -> list[str]:
    return list(_keywords(text))


@lru_cache(maxsize=1 << 14)  # the same needs and lines are read at every call of an ask
def _keywords(text: str) -> tuple[str, ...]:
    words = re.findall(r"[a-z0-9][a-z0-9'-]+", text.lower().replace("'s ", " "))
    return tuple(w for w in dict.fromkeys(w.removesuffix("'s") for w in words) if w not in STOPWORDS)


@lru_cache(maxsize=1 << 14)
def _stems(lowered: str) -> frozenset[str]:
    return frozenset(stems_of(lowered))


_ID = r"[\w.:'@/-]*\d[\w.:'@/-]*"  # a message id ("m0000008", "ftv-3797", "bob:m12"): a digit, no spaces
_SOURCES = rf"{_ID}(?:,\s*{_ID})*"


def fact_in(text: str, need: str) -> tuple[str, str] | None:
    """A stated fact, `need: value [ids]`: (value, ids). Brackets of other kinds inside the value (a stage direction,
    "[takes phone]") are words of it; a value the share screen cut is no fact."""
    found = re.search(re.escape(need) + rf": (.+?) \[({_SOURCES})\](?=[;.]|\s|$)", text, re.I)
    return (found[1], found[2]) if found and CUT not in found[1] else None


# ---------------------------------------------------------------------- matching lines to a rationale
def lines_of(view: PromptView, label: str, pattern: re.Pattern[str] = HIT) -> list[dict[str, str]]:
    lines = []
    for raw in view.block(label):
        if found := pattern.match(raw) or (pattern is HIT and FACT.match(raw)):
            fields = {k: v or "" for k, v in found.groupdict().items()}
            lines.append(fields | {"lowered": fields["text"].lower(), "sender": fields["sender"].lower()})
    return lines


def _same_word(word: str, keyword: str) -> bool:
    return word[:5] == keyword[:5] or stem(word) == stem(keyword)


def hits_of(line: dict[str, str], keywords: list[str]) -> int:
    """How many keywords a line's text holds: a keyword's first five letters in it ("launch" ~ "launching"), or a
    word of the same stem (`text_fold.stem`: "crying" ~ "cry", which the five letters miss)."""
    stems = _stems(line["lowered"])
    return sum(k[:5] in line["lowered"] or stem(k) in stems for k in keywords)


def names_of(need: str) -> list[str]:
    """Whom or what a need is about: its capitalised words after the first ("Why did Chandler call Paul")."""
    words = re.findall(r"[A-Za-z][\w'-]*", need)
    return list(dict.fromkeys(w.lower().removesuffix("'s") for w in words[1:] if w[0].isupper()))


def _answers(line: dict[str, str], need: str) -> int:
    """How well a line answers a need, 0 when it does not. It must be about someone or something the need names
    (`_about`); of the need's other words (what it asks about), the line must hold at least half, and they must be
    a fair part of its own words (a long line that happens to hold two of them is about something else). A need of
    names only is answered by a line holding them all."""
    names = names_of(need)
    if not _about(line, names):
        return 0
    asked = [k for k in keywords_of(need) if k not in names]
    if not asked:
        return len(names) if all(_about(line, [n]) for n in names) else 0
    sender = line["sender"] in asked and line["sender"][:5] not in line["lowered"]  # "bob": bob said it
    in_text = hits_of(line, asked)
    held = in_text + sender
    own = [w for w in keywords_of(line["text"]) if not w[0].isdigit()]  # a time or a figure is the answer itself
    about = sender + sum(any(_same_word(w, k) for k in [*asked, *names]) for w in own)
    # Two of its words in the line's own, unless it holds them all (a name alone is no answer).
    enough = 2 * held >= len(asked) and (in_text >= min(2, len(asked)) or held == len(asked))
    return held if enough and 4 * about >= len(own) else 0


def _about(line: dict[str, str], names: list[str]) -> bool:
    """The line is about someone or something the need names (in its words, its sender or its conversation): a
    need naming two people may be answered by one line about each."""
    where = f"{line['lowered']} {line['sender']} {line['channel']}"
    return not names or any(n[:5] in where for n in names)


def _bears_on(line: dict[str, str], need: str) -> int:
    """Weaker than answering: the line is about whom the need names and holds one of the words it asks about."""
    names = names_of(need)
    if not _about(line, names):
        return 0
    return hits_of(line, [k for k in keywords_of(need) if k not in names])


def filling(
    lines: list[dict[str, str]], need: str, *, whole_history: bool, people: list[str] | None = None
) -> list[dict[str, str]]:
    """The lines that answer a rationale, best first (`_answers`). With the member's whole history read (nothing
    left to search) and no such line, a rationale naming people is answered by everything they said (only `people`,
    when given)."""
    # A session summary says where to look, not what was said: only messages fill a rationale.
    messages = [line for line in lines if not line["id"].startswith("session:")]
    found = _ranked(messages, need, _answers)
    if found or not whole_history:
        return found
    named = {k for k in keywords_of(need) if people is None or k in people}
    return [line for line in messages if line["sender"] in named]


def bearing(lines: list[dict[str, str]], need: str) -> list[dict[str, str]]:
    """The lines that answer a rationale, else those that bear on it (`_bears_on`), best first: what an agent asked
    directly, or the one writing the answer, offers when nothing answers outright."""
    messages = [line for line in lines if not line["id"].startswith("session:")]
    return _ranked(messages, need, _answers) or _ranked(messages, need, _bears_on)


def exchange(lines: list[dict[str, str]], cited: list[dict[str, str]], need: str) -> list[dict[str, str]]:
    """The lines said with the cited ones (same conversation, same minute) that name whom or what the need names and
    the cited lines do not: a reply often leaves out what the line it answers named ("it's Paolo calling" - "Bon
    giorno!"), and the claim rests on both."""
    covered = " ".join(f"{line['lowered']} {line['sender']}" for line in cited)
    missing = [n for n in names_of(need) if n[:5] not in covered]
    moments = {(line["channel"], line.get("when", "")) for line in cited if line.get("when")}
    return [
        line
        for line in lines
        if (line["channel"], line.get("when", "")) in moments
        and line not in cited
        and any(n[:5] in f"{line['lowered']} {line['sender']}" for n in missing)
    ]


def _ranked(
    lines: list[dict[str, str]], need: str, score: Callable[[dict[str, str], str], int]
) -> list[dict[str, str]]:
    scored = [(n, i, line) for i, line in enumerate(lines) if (n := score(line, need))]
    # A line that says something before one that asks: "Carol, is the rehearsal room booked?" holds the need's words
    # as well as "Room 4B is booked for us", but only the second answers (a question is the answer only alone).
    return [line for _, _, line in sorted(scored, key=lambda s: (_asks(s[2]), -s[0], s[1]))]


def _asks(line: dict[str, str]) -> bool:
    return line["text"].rstrip().endswith("?")


def asked_of(view: PromptView) -> list[str]:
    """The members the ask was put to and who asked (EVERYONE ASKED, ASKED BY in the grounding)."""
    asked = label_of(view.text, "EVERYONE ASKED").split(" (")[0].split(",")
    names = [*asked, label_of(view.text, "ASKED BY").split(",")[0]]
    return [p.split()[0].lower() for p in names if p.strip()]


def value_of(found: list[dict[str, str]]) -> tuple[str, str]:
    """A rationale's value (the best line's words, said once) and source (every filling line's id)."""
    return found[0]["text"], ", ".join(line["id"] for line in found)
