"""A deterministic stand-in for the model, for tests, benchmarks and offline demos. NOT evidence of answer quality.

It reads only the prompts a real model gets (the upper-case labels in `prompts/agent.yaml`) and plays the agent
protocol mechanically:

- plan: one rationale per question the question contains (the items of a numbered list "1) ... 2) ...", each sentence
  that asks something, "... and when ..."); the other sentences are context;
- search: each unknown rationale once, in both memories (its content words; its text); it sees every search it made;
- fill: a line fills a rationale when it answers it: it is about someone the rationale names (its words, sender or
  conversation) and holds half of what the rationale asks, as a fair part of its own words; with the member's
  whole history read (nothing left to search) and no such line, a rationale naming people asked is answered by
  everything they said (the closing statement: any people it names);
- recruit: when a rationale stays unknown after its own search and the partner has spoken, it asks whom the
  rationale names, else whom the lines bearing on it name or who spoke in their conversations, else the first
  person listed; once a talk. An agent brought in answers with the lines that bear on its question best;
- stop: done when every rationale is known; stuck when it has nothing left to try and its partner told it nothing
  new;
- statement: each rationale with the lines that answer it, cited; consensus: the same, citing per part only what
  gives its value (never what merely bears on it); wherever it gives a value, it cites with the answering line the
  one said with it that names what it leaves out;
- words are compared by their first five letters or their stem ("crying" ~ "cry"); a stated fact is
  `need: value [ids]`, brackets inside the value being its words ("[takes phone]").
As the private model of the privacy split it "extracts" each hit's text as a fact (a stand-in, not a privacy filter).

    llm = LLMClient(ScriptedBackend(scripted_model))
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.llm.standin.reading import (
    BRIEF,
    PromptView,
    asked_of,
    bearing,
    exchange,
    fact_in,
    filling,
    keywords_of,
    label_of,
    lines_of,
    names_of,
    needs_of,
    plan_of,
    value_of,
)
from bot.llm.types import LLMRequest


EXHAUSTED = "Nothing left to try."
FEW = 3  # lines offered on a rationale nothing answers outright


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


# ---------------------------------------------------------------------- think
def _think(view: PromptView) -> dict[str, Any]:
    plan = plan_of(view)
    if not plan:
        plan = [_rationale(i, need) for i, need in enumerate(needs_of(view.question), 1)]
    board = [("blackboard", line) for line in view.block("BLACKBOARD")]
    told = [r for r in plan if r["status"] == "unknown" and _learn_from_heard(r, view.heard + board)]
    unknown = [r for r in plan if r["status"] == "unknown"]
    searched = view.block("PREVIOUS SEARCHES")
    fresh = [] if view.whole_history else [r for r in unknown if not _searched(r, searched)]
    # An agent brought in has one turn to answer: it searches wider.
    limit = 10 if _brought_in(view) else 5
    clear = [{"keywords": keywords_of(r["need"]), "limit": limit} for r in fresh]
    fuzzy = [{"text": r["need"], "top_k": 3} for r in fresh]
    notebook = lines_of(view, "NOTEBOOK", BRIEF)
    people = asked_of(view)
    found = {r["id"] for r in unknown if filling(notebook, r["need"], whole_history=view.whole_history, people=people)}
    unfilled = [r for r in unknown if r not in fresh and r["id"] not in found]  # searched; its notebook has nothing
    recruits = _recruits(view, unfilled, notebook) if view.heard else []
    # Stuck: something is missing, this agent has nothing left to try, its partner told it nothing new, and both
    # have had their turns to search and then to bring someone in (turns 0-3).
    turn = re.search(r"THINK \(turn (\d+)\)", view.instruction)
    stuck = bool(unknown) and not clear and not recruits and not told and bool(turn) and int(turn[1]) >= 3
    return {"plan": plan, "clear": clear, "fuzzy": fuzzy, "recruit": recruits, "done": not unknown,
            "cannot_progress": stuck}  # fmt: skip


def _searched(rationale: dict[str, str], searches: list[str]) -> bool:
    """Whether PREVIOUS SEARCHES lists this rationale's fuzzy search (made beside its clear one)."""
    text = json.dumps(rationale["need"], ensure_ascii=False)
    return any(f'"text":{text}' in line for line in searches)


def _rationale(index: int, need: str) -> dict[str, str]:
    return {"id": f"r{index}", "need": need, "status": "unknown", "value": "", "source": ""}


def _learn_from_heard(rationale: dict[str, str], heard: list[tuple[str, str]]) -> bool:
    for speaker, utterance in reversed(heard):
        if fact := fact_in(utterance, rationale["need"]):
            rationale.update(status="known", value=fact[0], source=f"{speaker}:{fact[1]}")
            return True
    return False


def _recruits(
    view: PromptView, searched: list[dict[str, str]], notebook: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Who may hold what its own searches did not fill, for each such part: whom the part names, then whom the
    notebook lines bearing on it name, then who spoke in their conversations; with nobody for any part, the first
    person listed. Each is asked every part still open, the one that points to them first; as many as the prompt
    allows, side by side, once a talk."""
    people = [p.strip() for p in label_of(view.instruction, f"PEOPLE {view.me} TALKS WITH").split(",") if p.strip()]
    if any("I asked " in s for s in view.said):
        return []  # once a talk: sub-conversations are costly, and the partner may ask someone else
    most = re.search(r'"recruit" PEOPLE .*?at most (\d+)', view.instruction, re.S)
    chosen: dict[str, dict[str, str]] = {}  # member -> the part that points to them
    for rationale in searched:
        related = bearing(notebook, rationale["need"])
        channels = {line["channel"] for line in related}
        speakers = {line["sender"] for line in notebook if line["channel"] in channels}
        named = names_of(rationale["need"])
        ranked = [
            *(p for p in people if _name(p) in named),
            *(p for p in people if any(_name(p) in line["lowered"] for line in related)),
            *(p for p in people if _name(p) in speakers),
        ]
        if ranked:
            chosen.setdefault(ranked[0], rationale)
    if not chosen and searched and people:  # nothing points anywhere: who talks with the member most
        chosen[people[0]] = searched[0]
    asked = list(chosen.items())[: int(most[1]) if most else 1]
    return [{"member": member, "question": _question(first, searched)} for member, first in asked]


def _question(first: dict[str, str], parts: list[dict[str, str]]) -> str:
    """Every part still open as a question, the one that points to the person asked first."""
    return " ".join(r["need"] + "?" for r in [first, *(r for r in parts if r is not first)])


def _brought_in(view: PromptView) -> bool:
    """Another agent brought this one in (it is neither asked nor asking): it was asked this question directly."""
    asked = re.findall(r"@([^\s)]+)", f"{label_of(view.text, 'EVERYONE ASKED')} {label_of(view.text, 'ASKED BY')}")
    return bool(asked) and view.me not in asked


def _name(handle: str) -> str:
    """A handle as a name in text ("dr._oberman" -> "dr. oberman")."""
    return handle.replace("_", " ").lower()


# ---------------------------------------------------------------------- act
def _extract(view: PromptView) -> dict[str, Any]:
    return {"facts": [{"fact": h["text"], "source": h["id"]} for h in lines_of(view, "MEMORY RESULTS")]}


def _act(view: PromptView) -> dict[str, Any]:
    plan = plan_of(view)
    hits = lines_of(view, "MEMORY RESULTS")
    subs = re.findall(r"^SUB-CONVERSATION with (\S+)'s agent: (.*)$", view.instruction, re.M)
    learned = []
    # An agent brought in by another (not among those asked) was asked this directly: it offers what bears on it.
    brought_in = _brought_in(view)
    for r in (r for r in plan if r["status"] == "unknown"):
        found = filling(hits, r["need"], whole_history=view.whole_history, people=asked_of(view))
        found = found or (bearing(hits, r["need"])[:FEW] if brought_in else [])
        found += exchange(hits, found, r["need"])
        fact = value_of(found) if found else next((f for _, said in subs if (f := fact_in(said, r["need"]))), None)
        if fact:
            learned.append({"id": r["id"], "value": fact[0], "source": fact[1]})
            r.update(status="known", value=fact[0], source=fact[1])
    exhausted = label_of(view.instruction, "SEARCHES THIS TURN") == "0" and not subs
    utterance = _utterance(plan, [member for member, _ in subs], exhausted)
    return {"utterance": utterance, "learned": learned, "answer": _answer(plan)}


def _statement(view: PromptView) -> dict[str, Any]:
    """The closing statement: each rationale as the plan has it (an unknown one from the notebook), citing every
    notebook line that fills it (the rule of act): what this side holds, though the other side told it first."""
    notebook = lines_of(view, "NOTEBOOK")
    claims, said = [], []
    for r in plan_of(view):
        found = filling(notebook, r["need"], whole_history=view.whole_history)
        found += exchange(notebook, found, r["need"])
        if r["status"] == "known" or found:
            value, source = (r["value"], r["source"]) if r["status"] == "known" else value_of(found)
            sources = list(dict.fromkeys([*_ids(source), *(line["id"] for line in found)]))
            claims.append({"id": r["id"], "text": value, "sources": sources})
            said.append(f"{r['need']}: {value} [{', '.join(sources)}]")
    # In the words its turns used ("Found: …"): the same facts said again are the sentences its member approved.
    statement = f"Found: {'; '.join(said)}." if said else "Nothing in my notebook answers the question."
    return {"statement": statement, "claims": claims}


def _utterance(plan: list[dict[str, str]], asked: list[str], exhausted: bool) -> str:
    known = [f"{r['need']}: {r['value']} [{r['source']}]" for r in plan if r["status"] == "known"]
    missing = [r["need"] for r in plan if r["status"] == "unknown"]
    # What it has left to try comes first: a long utterance is shortened at its end in the partner's history.
    parts = [EXHAUSTED] if missing and exhausted else []
    if asked:
        whose = " and ".join(member + "'s" for member in asked)
        parts.append(f"I asked {whose} agent{'s' if len(asked) > 1 else ''}.")
    parts.append(f"Found: {'; '.join(known)}." if known else "I found nothing yet.")
    if missing:
        parts.append(f"Still missing: {'; '.join(missing)}.")
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
    found = [f"{h['text']} [{h['id']}]" for h in lines_of(view, "MEMORY RESULTS")]
    heard = [u for _, u in view.heard if u.startswith("Found:")]
    utterance = f"Found: {' '.join(found)}" if found else "I found nothing."
    answer = " ".join([*found, *(u.removeprefix("Found: ") for u in heard)]) or None
    return {"utterance": utterance, "learned": [], "answer": answer}


# ---------------------------------------------------------------------- consensus
def _consensus(view: PromptView) -> dict[str, Any]:
    """One claim per need (each part of the question, and any other a plan holds): the values the agents' plans
    found for it (joined, none dropped: different agents hold different parts), else what a statement gives for it,
    else the EVIDENCE line that answers it outright; citing what gives that value (the ids the rationales and
    statements give, else that line) and the lines said with it that name what it leaves out. Lines that only bear
    on a part are neither given nor cited: no answer beats a wrong one, and citing everything is no provenance."""
    rows = [[c.strip() for c in line.lstrip("- ").split(" | ")] for line in view.block("RATIONALES")]
    rows = [r for r in rows if len(r) >= 3]  # "(none)" is no rationale
    said = [_stated(s) for s in view.block("STATEMENTS") if s.startswith("- ") and "(no answer)" not in s]
    evidence = lines_of(view, "EVIDENCE")
    if not rows:  # no plans (plain prompting): the fullest statement, citing what it cites
        longest = max(said, key=lambda s: len(_strip_sources(s)), default="")
        answer = _strip_sources(longest)
        claims = [{"text": answer, "sources": re.findall(r"\[([^\]]+)\]", longest)}] if answer else []
        return {"answer": answer, "agreed": len(set(said)) <= 1, "cited": [], "dropped": [], "claims": claims,
                "disagreements": [], "answerable": bool(answer)}  # fmt: skip
    # The needs: the question's parts, and any other a plan holds.
    needs = list(dict.fromkeys([*needs_of(view.question), *(need for _key, need, *_ in rows)]))
    values: dict[str, list[str]] = {need: [] for need in needs}
    sources: dict[str, list[str]] = {need: [] for need in needs}
    stated: dict[str, list[str]] = {need: [] for need in needs}  # what the statements give for it
    for _key, need, value, *rest in rows:
        values[need].append(_strip_source(value))
        sources[need].extend(_ids(rest[0] if rest else ""))
    for statement in said:
        for need in needs:
            if fact := fact_in(statement, need):
                stated[need].append(fact[0])
                sources[need].extend(_ids(fact[1]))
    claims = []
    for need, found in values.items():
        answering = _answering(evidence, need)
        given = [v for v in dict.fromkeys(found or stated[need]) if v]
        said_values = given or [line["text"] for line in answering[:1]]
        if not said_values:
            continue
        text = " / ".join(said_values)  # the fact first, in the words that give it (the need is the question's)
        # What gives this part's value: the ids its plans and statements give, else the line taken for it; never
        # everything that bears on the part or that the people it names said (citing all is no provenance).
        cited = list(dict.fromkeys([*sources[need], *(line["id"] for line in answering[:1] if not given)]))
        # The lines said with those that give the value, naming what they leave out.
        giving = {*sources[need], *(line["id"] for line in answering[:1])}
        said_with = exchange(evidence, [line for line in evidence if line["id"] in giving], need)
        claims.append({"text": text, "sources": list(dict.fromkeys([*cited, *(line["id"] for line in said_with)]))})
    answer = "; ".join(c["text"] for c in claims)
    return {"answer": answer, "agreed": len({_strip_sources(s) for s in said}) <= 1, "cited": [r[0] for r in rows],
            "dropped": [], "claims": claims, "disagreements": [], "answerable": bool(claims)}  # fmt: skip


def _answering(evidence: list[dict[str, str]], need: str) -> list[dict[str, str]]:
    """The EVIDENCE lines that answer a need outright (never everything the people it names said: the first of those
    is a greeting as often as an answer)."""
    return filling(evidence, need, whole_history=False)


def _ids(source: str) -> list[str]:
    return [part for part in re.split(r"[,\s]+", source) if part and part != "-"]


def _strip_source(value: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]$", "", value)


def _stated(line: str) -> str:
    """A STATEMENTS line's facts, as the sides write them: without who said it, a "Found:" label or the last stop."""
    return line.split(": ", 1)[-1].removeprefix("Found: ").rstrip(".")


def _strip_sources(text: str) -> str:
    return re.sub(r"\s*\[[^\]]*\]", "", text)
