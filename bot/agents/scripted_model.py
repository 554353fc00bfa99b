"""A deterministic stand-in for the model, for tests, benchmarks and offline demos. NOT evidence of answer quality.

It reads only the prompts a real model gets (the upper-case labels in `prompts/agent.yaml`) and plays the agent
protocol mechanically:

- plan: one rationale per question the question contains ("First: ... Second: ...", "1) ... 2) ...", each sentence
  that asks something, "... and when ..."); the other sentences are context;
- search: each unknown rationale once, in both memories (its content words; its text); it sees every search it made;
- fill: a line fills a rationale when it (with its sender) holds at least half its content words, two in its words;
  with the member's whole history read (nothing left to search) and no such line, a rationale naming people asked
  is answered by everything they said (the closing statement: any people it names);
- recruit: when a rationale stays unknown after its own search and the partner has spoken, it asks the first person it
  may bring in who is named in, or spoke, a line sharing a word with it (or in that line's conversation), else the
  first person listed; once a talk;
- stop: done when every rationale is known; stuck when it has nothing left to try and its partner said the same;
- statement and consensus: each rationale with the lines that fill it, cited.
As the private model of the privacy split it "extracts" each hit's text as a fact (a stand-in, not a privacy filter).

    llm = LLMClient(ScriptedBackend(scripted_model))
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bot.llm.types import LLMRequest
from bot.prompts import DATA_CLOSE, DATA_OPEN


STOPWORDS = frozenset(
    "a an and are at be by can could did do does for from has have how i in is it me my of on or our please tell "
    "that the their them there they this to us was we were what when where which who whom why will with would you "
    "your know about any find out".split()
)
EXHAUSTED = "Nothing left to try."
_HIT = re.compile(
    r"^\[(?P<id>[^\]]+)\] #(?P<channel>\S+) (?:\S+ \S+ (?P<sender>[^:]+)|\S+): (?P<text>.*?)(?: \| context: .*)?$"
)
_FACT = re.compile(r"^\[(?P<id>[^\]]+)\] (?P<channel>)(?P<sender>)(?P<text>.+)$")  # the private model's fact line
_BRIEF = re.compile(r"^- (?P<id>\S+) #(?P<channel>\S+) (?P<sender>[^:]*): (?P<text>.*)$")  # a think NOTEBOOK line
_ORDINAL = r"(?:First|Second|Third|Fourth|Fifth|Finally|Next|Then|Also)"
_QUESTION_WORD = r"(?:who|whom|whose|what|when|where|which|why|how)"


def scripted_model(request: LLMRequest) -> str:
    """The model's reply text (JSON) to one request of the agent protocol."""
    view = PromptView.of(request)
    if request.purpose == "consensus":
        return json.dumps(_consensus(view))
    if request.purpose == "extract_facts":
        return json.dumps(_extract(view))
    if request.purpose == "statement":
        return json.dumps(_statement(view))
    plain = "PLAN:" not in view.instruction
    if request.purpose == "think":
        return json.dumps(_plain_think(view) if plain else _think(view))
    if request.purpose == "act":
        return json.dumps(_plain_act(view) if plain else _act(view))
    raise ValueError(f"the scripted model does not play {request.purpose!r}")


# ---------------------------------------------------------------------- reading the prompt
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
        return cls(_label(text, "QUESTION"), me[1] if me else "", text, request.messages[-1]["content"], heard, said)

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


def _label(text: str, label: str) -> str:
    found = re.search(rf"^{label}: (.*)$", text, re.M)
    return found[1].strip() if found else ""


def plan_of(view: PromptView) -> list[dict[str, str]]:
    """The PLAN line's rationales (the JSON inside its data block)."""
    raw = _label(view.instruction, "PLAN").replace(DATA_OPEN, "").replace(DATA_CLOSE, "").strip()
    return json.loads(raw or "[]")


def needs_of(question: str) -> list[str]:
    """The questions a question contains: its "First: ..."-style or numbered parts, else each sentence that asks
    something (split again at "and" + a question word); without any, the first sentence."""
    text = " ".join(question.split())
    parts = re.split(rf"(?:^|\s){_ORDINAL}:\s+|(?:^|\s)\(?\d+[).]\s+", text)
    if len(parts) > 1:
        return [need for part in parts[1:] if (need := _clean(_sentences(part)[0] if part else ""))]
    sentences = _sentences(text)
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
    words = re.findall(r"[a-z0-9][a-z0-9'-]+", text.lower().replace("'s ", " "))
    return [w for w in dict.fromkeys(w.removesuffix("'s") for w in words) if w not in STOPWORDS]


def _fact_in(text: str, need: str) -> tuple[str, str] | None:
    found = re.search(re.escape(need) + r": (.+?) \[([^\]]*)\]", text, re.I)
    return (found[1], found[2]) if found else None


# ---------------------------------------------------------------------- matching lines to a rationale
def _lines(view: PromptView, label: str, pattern: re.Pattern[str] = _HIT) -> list[dict[str, str]]:
    lines = []
    for raw in view.block(label):
        if found := pattern.match(raw) or (pattern is _HIT and _FACT.match(raw)):
            fields = {k: v or "" for k, v in found.groupdict().items()}
            lines.append(fields | {"lowered": fields["text"].lower(), "sender": fields["sender"].lower()})
    return lines


def _hits_of(line: dict[str, str], keywords: list[str]) -> int:
    """How many keywords a line's text holds, by a crude stem (a keyword's first five letters: "launch" ~
    "launching")."""
    return sum(k[:5] in line["lowered"] for k in keywords)


def _fills(line: dict[str, str], keywords: list[str]) -> int:
    """A line fills a rationale when it and its sender hold at least half its keywords, two of them in its words
    unless they hold all (a name alone is no answer); returns how many it holds, 0 when it does not fill it."""
    in_text = _hits_of(line, keywords)
    held = in_text + (line["sender"] in keywords and line["sender"][:5] not in line["lowered"])
    return held if 2 * held >= len(keywords) and (in_text >= min(2, len(keywords)) or held == len(keywords)) else 0


def filling(
    lines: list[dict[str, str]], need: str, *, whole_history: bool, people: list[str] | None = None
) -> list[dict[str, str]]:
    """The lines that fill a rationale, best first (`_fills`). With the member's whole history read (nothing left to
    search) and no such line, a rationale naming people is answered by everything they said (only `people`, when
    given)."""
    keywords = keywords_of(need)
    # A session summary says where to look, not what was said: only messages fill a rationale.
    messages = [line for line in lines if not line["id"].startswith("session:")]
    scored = [(n, i, line) for i, line in enumerate(messages) if (n := _fills(line, keywords))]
    if scored or not whole_history:
        return [line for _, _, line in sorted(scored, key=lambda s: (-s[0], s[1]))]
    named = {k for k in keywords if people is None or k in people}
    return [line for line in messages if line["sender"] in named]


def _asked(view: PromptView) -> list[str]:
    """The members the ask was put to and who asked (EVERYONE ASKED, ASKED BY in the grounding)."""
    asked = _label(view.text, "EVERYONE ASKED").split(" (")[0].split(",")
    names = [*asked, _label(view.text, "ASKED BY").split(",")[0]]
    return [p.split()[0].lower() for p in names if p.strip()]


def _value(found: list[dict[str, str]]) -> tuple[str, str]:
    """A rationale's value (the best line's words) and source (every filling line's id)."""
    more = f" (and {len(found) - 1} more lines)" if len(found) > 1 else ""
    return found[0]["text"] + more, ", ".join(line["id"] for line in found)


# ---------------------------------------------------------------------- think
def _think(view: PromptView) -> dict[str, Any]:
    plan = plan_of(view)
    if not plan:
        plan = [_rationale(i, need) for i, need in enumerate(needs_of(view.question), 1)]
    board = [("blackboard", line) for line in view.block("BLACKBOARD")]
    for r in (r for r in plan if r["status"] == "unknown"):
        _learn_from_heard(r, view.heard + board)
    unknown = [r for r in plan if r["status"] == "unknown"]
    searched = view.block("PREVIOUS SEARCHES")
    fresh = [] if view.whole_history else [r for r in unknown if not _searched(r, searched)]
    clear = [{"keywords": keywords_of(r["need"]), "limit": 5} for r in fresh]
    fuzzy = [{"text": r["need"], "top_k": 3} for r in fresh]
    notebook = _lines(view, "NOTEBOOK", _BRIEF)
    people = _asked(view)
    found = {r["id"] for r in unknown if filling(notebook, r["need"], whole_history=view.whole_history, people=people)}
    unfilled = [r for r in unknown if r not in fresh and r["id"] not in found]  # searched; its notebook has nothing
    recruit = _recruit(view, unfilled, notebook) if view.heard else None
    # Stuck: something is missing, this agent has nothing left to try, and neither has its partner.
    stuck = bool(unknown) and not clear and recruit is None and bool(view.heard) and EXHAUSTED in view.heard[-1][1]
    return {"plan": plan, "clear": clear, "fuzzy": fuzzy, "recruit": recruit, "done": not unknown,
            "cannot_progress": stuck}  # fmt: skip


def _searched(rationale: dict[str, str], searches: list[str]) -> bool:
    """Whether PREVIOUS SEARCHES lists this rationale's fuzzy search (made beside its clear one)."""
    text = json.dumps(rationale["need"], ensure_ascii=False)
    return any(f'"text":{text}' in line for line in searches)


def _rationale(index: int, need: str) -> dict[str, str]:
    return {"id": f"r{index}", "need": need, "status": "unknown", "value": "", "source": ""}


def _learn_from_heard(rationale: dict[str, str], heard: list[tuple[str, str]]) -> None:
    for speaker, utterance in reversed(heard):
        if fact := _fact_in(utterance, rationale["need"]):
            rationale.update(status="known", value=fact[0], source=f"{speaker}:{fact[1]}")
            return


def _recruit(
    view: PromptView, searched: list[dict[str, str]], notebook: list[dict[str, str]]
) -> dict[str, str] | None:
    """Someone who may hold what its own searches did not fill: a person its notebook lines on the matter name or
    quote, or who spoke in their conversations; each person once."""
    people = [p.strip() for p in _label(view.instruction, f"PEOPLE {view.me} TALKS WITH").split(",") if p.strip()]
    if not searched or not people or any(re.search(r"I asked (\S+)'s agent", s) for s in view.said):
        return None  # one person a talk: a sub-conversation is costly
    keywords = keywords_of(searched[0]["need"])
    related = [line for line in notebook if _hits_of(line, keywords)]
    channels = {line["channel"] for line in related}
    speakers = {line["sender"] for line in notebook if line["channel"] in channels}
    # Whom the question names, then whom its lines name, then who spoke where they were said; else the first listed
    # (the one the member talks with most about such things).
    ranked = [
        *(p for p in people if p.lower() in keywords),
        *(p for p in people if any(p.lower() in line["lowered"] for line in related)),
        *(p for p in people if p.lower() in speakers),
        *people,
    ]
    return {"member": ranked[0], "question": " ".join(r["need"] + "?" for r in searched)}


# ---------------------------------------------------------------------- act
def _extract(view: PromptView) -> dict[str, Any]:
    return {"facts": [{"fact": h["text"], "source": h["id"]} for h in _lines(view, "MEMORY RESULTS")]}


def _act(view: PromptView) -> dict[str, Any]:
    plan = plan_of(view)
    hits = _lines(view, "MEMORY RESULTS")
    sub = re.search(r"^SUB-CONVERSATION with (\S+)'s agent: (.*)$", view.instruction, re.M)
    learned = []
    for r in (r for r in plan if r["status"] == "unknown"):
        found = filling(hits, r["need"], whole_history=view.whole_history, people=_asked(view))
        fact = _value(found) if found else _fact_in(sub[2], r["need"]) if sub else None
        if fact:
            learned.append({"id": r["id"], "value": fact[0], "source": fact[1]})
            r.update(status="known", value=fact[0], source=fact[1])
    exhausted = _label(view.instruction, "SEARCHES THIS TURN") == "0" and not sub
    utterance = _utterance(plan, sub[1] if sub else None, exhausted)
    return {"utterance": utterance, "learned": learned, "answer": _answer(plan)}


def _statement(view: PromptView) -> dict[str, Any]:
    """The closing statement: each rationale as the plan has it (an unknown one from the notebook), citing every
    notebook line that fills it (the rule of act): what this side holds, though the other side told it first."""
    notebook = _lines(view, "NOTEBOOK")
    claims, said = [], []
    for r in plan_of(view):
        found = filling(notebook, r["need"], whole_history=view.whole_history)
        if r["status"] == "known" or found:
            value, source = (r["value"], r["source"]) if r["status"] == "known" else _value(found)
            sources = list(dict.fromkeys([*_ids(source), *(line["id"] for line in found)]))
            claims.append({"id": r["id"], "text": value, "sources": sources})
            said.append(f"{r['need']}: {value} [{', '.join(sources)}]")
    return {"statement": "; ".join(said) or "Nothing in my notebook answers the question.", "claims": claims}


def _utterance(plan: list[dict[str, str]], asked: str | None, exhausted: bool) -> str:
    known = [f"{r['need']}: {r['value']} [{r['source']}]" for r in plan if r["status"] == "known"]
    missing = [r["need"] for r in plan if r["status"] == "unknown"]
    parts = [f"Found: {'; '.join(known)}." if known else "I found nothing yet."]
    if missing:
        parts.append(f"Still missing: {'; '.join(missing)}.")
    if asked:
        parts.append(f"I asked {asked}'s agent.")
    if missing and exhausted:
        parts.append(EXHAUSTED)
    return " ".join(parts)


def _answer(plan: list[dict[str, str]]) -> str | None:
    if not plan or any(r["status"] == "unknown" for r in plan):
        return None
    return "; ".join(f"{r['need']}: {r['value']} [{r['source']}]" for r in plan)


# ---------------------------------------------------------------------- plain prompting (no InfoNav)
def _plain_think(view: PromptView) -> dict[str, Any]:
    searched = bool(view.block("PREVIOUS SEARCHES"))
    clear = [] if searched else [{"keywords": keywords_of(n), "limit": 5} for n in needs_of(view.question)]
    return {"clear": clear, "fuzzy": [], "recruit": None, "done": searched, "cannot_progress": False}


def _plain_act(view: PromptView) -> dict[str, Any]:
    found = [f"{h['text']} [{h['id']}]" for h in _lines(view, "MEMORY RESULTS")]
    heard = [u for _, u in view.heard if u.startswith("Found:")]
    utterance = f"Found: {' '.join(found)}" if found else "I found nothing."
    answer = " ".join([*found, *(u.removeprefix("Found: ") for u in heard)]) or None
    return {"utterance": utterance, "learned": [], "answer": answer}


# ---------------------------------------------------------------------- consensus
def _consensus(view: PromptView) -> dict[str, Any]:
    """One claim per need: the values the agents found for it (joined, none dropped: different agents hold
    different parts), citing the ids the rationales and statements give for it and the EVIDENCE lines that fill it."""
    rows = [[c.strip() for c in line.lstrip("- ").split(" | ")] for line in view.block("RATIONALES")]
    rows = [r for r in rows if len(r) >= 3]  # "(none)" is no rationale
    said = [s.split(": ", 1)[-1] for s in view.block("STATEMENTS") if s.startswith("- ") and "(no answer)" not in s]
    if not rows:  # no plans (plain prompting): the fullest statement, citing what it cites
        longest = max(said, key=lambda s: len(_strip_sources(s)), default="")
        answer = _strip_sources(longest)
        claims = [{"text": answer, "sources": re.findall(r"\[([^\]]+)\]", longest)}] if answer else []
        return {"answer": answer, "agreed": len(set(said)) <= 1, "cited": [], "dropped": [], "claims": claims,
                "disagreements": [], "answerable": bool(answer)}  # fmt: skip
    evidence = _lines(view, "EVIDENCE")
    values: dict[str, list[str]] = {}
    sources: dict[str, list[str]] = {}
    for _key, need, value, *rest in rows:
        values.setdefault(need, []).append(_strip_source(value))
        sources.setdefault(need, []).extend(_ids(rest[0] if rest else ""))
    for statement in said:
        for need in values:
            if fact := _fact_in(statement, need):
                sources[need].extend(_ids(fact[1]))
    claims = []
    for need, found in values.items():
        # Consensus reads all that was passed on (nothing left to search): a need naming people, their lines.
        lines = [line["id"] for line in filling(evidence, need, whole_history=True)]
        text = f"{need}: {' / '.join(dict.fromkeys(found))}"
        claims.append({"text": text, "sources": list(dict.fromkeys([*sources[need], *lines]))})
    answer = "; ".join(c["text"] for c in claims)
    return {"answer": answer, "agreed": len({_strip_sources(s) for s in said}) <= 1, "cited": [r[0] for r in rows],
            "dropped": [], "claims": claims, "disagreements": [], "answerable": True}  # fmt: skip


def _ids(source: str) -> list[str]:
    return [part for part in re.split(r"[,\s]+", source) if part and part != "-"]


def _strip_source(value: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]$", "", value)


def _strip_sources(text: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]", "", text)
