"""A deterministic stand-in for the model, for tests, benchmarks and offline demos. NOT evidence of answer quality.

It reads the same prompts a real model gets (the upper-case labels in `prompts/agent.yaml`) and plays the agent
protocol mechanically: the plan has one rationale per part of the question ("X and Y" -> two), clear-memory keywords
are the content words of an unknown rationale, a rationale becomes known when a hit contains all its keywords or
another agent's message states it, a closing statement restates the plan (an unknown rationale filled from the
best-matching notebook line, as in act), and consensus joins the kept values. As the private model of the privacy split
it "extracts" each hit's text as a fact (mechanically: a stand-in, not a privacy filter). Use it behind the real
client:

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
    "your know about any".split()
)
EXHAUSTED = "Nothing left to try."
_HIT = re.compile(r"^\[(?P<id>[^\]]+)\] #\S+ (?:\S+ \S+ (?P<sender>[^:]+)|\S+): (?P<text>.*?)(?: \| context: .*)?$")
_FACT = re.compile(r"^\[(?P<id>[^\]]+)\] (?P<sender>)(?P<text>.+)$")  # a fact line from the private model


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
        return cls(
            question=_label(text, "QUESTION"),
            me=(re.search(r"YOU ARE: (\S+)'s agent", text) or [None, ""])[1],
            instruction=request.messages[-1]["content"],
            heard=heard,
            said=said,
        )

    def block(self, label: str) -> list[str]:
        """Lines under `LABEL:` up to the next blank or upper-case label line."""
        lines = self.instruction.splitlines()
        start = next((i for i, line in enumerate(lines) if line.startswith(label + ":")), None)
        if start is None:
            return []
        out = []
        for line in lines[start + 1 :]:
            if not line.strip() or re.match(r"^[A-Z][A-Z -]+:", line) or line[0].isalpha() and line[0].isupper():
                break
            out.append(line.strip())
        return out


def _label(text: str, label: str) -> str:
    found = re.search(rf"^{label}: (.*)$", text, re.M)
    return found[1].strip() if found else ""


def plan_of(view: PromptView) -> list[dict[str, str]]:
    """The PLAN line's rationales (the JSON inside its data block)."""
    raw = _label(view.instruction, "PLAN").replace(DATA_OPEN, "").replace(DATA_CLOSE, "").strip()
    return json.loads(raw or "[]")


def needs_of(question: str) -> list[str]:
    """One need per numbered sub-question ("1) ... 2) ..."), else per part joined by "and", commas, semicolons."""
    if re.search(r"(^|\s)\d\)\s", question):
        parts = re.split(r"(?:^|\s)\d\)\s+", question)[1:]
    else:
        parts = re.split(r"\s+and\s+|,\s*|;\s*", question.strip())
    return [p.strip().rstrip("?.! ") for p in parts if keywords_of(p)]


def keywords_of(text: str) -> list[str]:
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'-]+", text.lower())
    return [w for w in dict.fromkeys(words) if w not in STOPWORDS]


def _stems_in(lowered: str, stems: list[str]) -> int:
    """How many keywords a lower-cased text holds, by a crude stem (a keyword's first five letters: "launch" ~
    "launching"); 0 unless at least half do."""
    found = sum(stem in lowered for stem in stems)
    return found if stems and 2 * found >= len(stems) else 0


def _fact_in(text: str, need: str) -> tuple[str, str] | None:
    found = re.search(re.escape(need) + r": (.+?) \[([^\]]*)\]", text, re.I)
    return (found[1], found[2]) if found else None


# ---------------------------------------------------------------------- think
def _think(view: PromptView) -> dict[str, Any]:
    plan = plan_of(view)
    if not plan:
        plan = [_rationale(i, need) for i, need in enumerate(needs_of(view.question), 1)]
    board = [("blackboard", line) for line in view.block("BLACKBOARD")]
    for r in plan:
        if r["status"] == "unknown":
            _learn_from_heard(r, view.heard + board)
    unknown = [r for r in plan if r["status"] == "unknown"]
    searches = "\n".join(view.block("PREVIOUS SEARCHES"))
    clear, fuzzy = [], []
    for r in unknown:
        keywords = json.dumps(keywords_of(r["need"]), ensure_ascii=False, separators=(",", ":"))
        if keywords not in searches:  # first: both memories
            clear.append({"keywords": keywords_of(r["need"]), "limit": 5})
            fuzzy.append({"text": r["need"], "top_k": 3})
        elif f'{keywords},"context_window":1' not in searches:  # then wider, as agents tend to
            clear.append({"keywords": keywords_of(r["need"]), "limit": 10, "context_window": 1})
    recruit = _recruit(view, unknown) if unknown and not clear else None
    # Stuck only when this agent has nothing left to try AND the other agent said the same.
    partner_exhausted = bool(view.heard) and EXHAUSTED in view.heard[-1][1]
    stuck = bool(unknown) and not clear and recruit is None and partner_exhausted
    return {"plan": plan, "clear": clear, "fuzzy": fuzzy, "recruit": recruit, "done": not unknown,
            "cannot_progress": stuck}  # fmt: skip


def _rationale(index: int, need: str) -> dict[str, str]:
    return {"id": f"r{index}", "need": need, "status": "unknown", "value": "", "source": ""}


def _learn_from_heard(rationale: dict[str, str], heard: list[tuple[str, str]]) -> None:
    for speaker, utterance in reversed(heard):
        if fact := _fact_in(utterance, rationale["need"]):
            rationale.update(status="known", value=fact[0], source=f"{speaker}:{fact[1]}")
            return


def _recruit(view: PromptView, unknown: list[dict[str, str]]) -> dict[str, str] | None:
    """Bring in the first person listed (the one the member talks with most), once, after the partner spoke."""
    people = [p.strip() for p in _label(view.instruction, f"PEOPLE {view.me} TALKS WITH").split(",") if p.strip()]
    if not people or not view.heard or _asked_someone(view) is not None:
        return None
    return {"member": people[0], "question": unknown[0]["need"]}


def _asked_someone(view: PromptView) -> str | None:
    return next((m[1] for s in view.said if (m := re.search(r"I asked (\S+)'s agent", s))), None)


# ---------------------------------------------------------------------- act
def _hits(view: PromptView) -> list[dict[str, str]]:
    """The MEMORY RESULTS lines: memory hits, or (with a private model) the facts it extracted from them."""
    return [hit for line in view.block("MEMORY RESULTS") if (hit := _parsed(line)) is not None]


def _extract(view: PromptView) -> dict[str, Any]:
    return {"facts": [{"fact": h["text"], "source": h["id"]} for h in _hits(view)]}


def _act(view: PromptView) -> dict[str, Any]:
    plan = plan_of(view)
    hits = _hits(view)
    sub = re.search(r"^SUB-CONVERSATION with (\S+)'s agent: (.*)$", view.instruction, re.M)
    learned = []
    for r in (r for r in plan if r["status"] == "unknown"):
        hit = _best_hit(hits, keywords_of(r["need"]))
        fact = (hit["text"], hit["id"]) if hit else _fact_in(sub[2], r["need"]) if sub else None
        if fact:
            learned.append({"id": r["id"], "value": fact[0], "source": fact[1]})
            r.update(status="known", value=fact[0], source=fact[1])
    exhausted = _label(view.instruction, "SEARCHES THIS TURN") == "0" and not sub
    utterance = _utterance(plan, sub[1] if sub else None, exhausted)
    return {"utterance": utterance, "learned": learned, "answer": _answer(plan)}


def _statement(view: PromptView) -> dict[str, Any]:
    """The closing statement: each known rationale as the plan has it; an unknown one from the notebook line that
    matches it best (one line per rationale, the same rule as act)."""
    notebook = [hit for line in view.block("NOTEBOOK") if (hit := _parsed(line)) is not None]
    claims = []
    for r in plan_of(view):
        hit = _best_hit(notebook, keywords_of(r["need"])) if r["status"] == "unknown" else None
        if r["status"] == "known" or hit:
            value, source = (r["value"], r["source"]) if hit is None else (hit["text"], hit["id"])
            claims.append({"id": r["id"], "text": value, "sources": [source] if source else []})
    needs = {r["id"]: r["need"] for r in plan_of(view)}
    said = "; ".join(f"{needs[c['id']]}: {c['text']} [{', '.join(c['sources'])}]" for c in claims)
    return {"statement": said or "Nothing in my notebook answers the question.", "claims": claims}


def _best_hit(hits: list[dict[str, str]], keywords: list[str]) -> dict[str, str] | None:
    """The first hit holding the most keywords (`_stems_in`), if any does."""
    stems = [k[:5] for k in keywords]
    best, found = None, 0
    for hit in hits:
        if (count := _stems_in(hit["lowered"], stems)) > found:
            best, found = hit, count
    return best


def _parsed(line: str) -> dict[str, str] | None:
    """A MEMORY RESULTS or NOTEBOOK line's fields, and its sender and text lower-cased for matching."""
    if (m := _HIT.match(line) or _FACT.match(line)) is None:
        return None
    fields = m.groupdict()
    return fields | {"lowered": f"{fields['sender'] or ''} {fields['text']}".lower()}


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
    hits = _hits(view)
    found = [f"{h['text']} [{h['id']}]" for h in hits]
    heard = [u for _, u in view.heard if u.startswith("Found:")]
    utterance = f"Found: {' '.join(found)}" if found else "I found nothing."
    answer = " ".join([*found, *(u.removeprefix("Found: ") for u in heard)]) or None
    return {"utterance": utterance, "learned": [], "answer": answer}


# ---------------------------------------------------------------------- consensus
def _consensus(view: PromptView) -> dict[str, Any]:
    rows = [[c.strip() for c in line.lstrip("- ").split(" | ")] for line in view.block("RATIONALES")]
    rows = [r for r in rows if len(r) >= 3]  # "(none)" is no rationale
    kept: dict[str, str] = {}
    cited, dropped = [], []
    for key, need, value, *_ in rows:
        if kept.setdefault(need.lower(), value) == value:
            cited.append(key)
        else:
            dropped.append(key)  # a conflicting value for a need already settled
    said = [s.split(": ", 1)[-1] for s in view.block("STATEMENTS") if s.startswith("- ") and "(no answer)" not in s]
    statements = [_strip_sources(s) for s in said]
    answer = "; ".join(f"{need}: {_strip_source(value)}" for need, value in kept.items())
    sources = {r[1].lower(): r[3] for r in rows if len(r) >= 4 and r[0] in cited}
    claims = [{"text": f"{need}: {_strip_source(value)}", "sources": [sources.get(need, "")]}
              for need, value in kept.items()]  # fmt: skip
    if not rows:  # no plans (plain prompting): the fullest statement, citing what it cites
        longest = max(said, key=lambda s: len(_strip_sources(s)), default="")
        answer = _strip_sources(longest)
        claims = [{"text": answer, "sources": re.findall(r"\[([^\]]+)\]", longest)}] if answer else []
    return {"answer": answer, "agreed": len(set(statements)) <= 1, "cited": cited, "dropped": dropped,
            "claims": claims, "disagreements": [], "answerable": bool(answer)}  # fmt: skip


def _strip_source(value: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]$", "", value)


def _strip_sources(text: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]", "", text)
