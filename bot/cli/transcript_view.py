"""Rendering a transcript for the terminal: plans turn by turn, memory queries, utterances, sub-conversations,
consensus, cost and the paper's behaviour metrics."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from bot.agents.steps import recruits_of
from bot.asks.metrics import behaviour
from bot.asks.transcripts import ConversationView, Transcript
from bot.cli.printable import printable


def render_transcript(transcript: Transcript, *, short: bool = False) -> Group:
    parts: list[Any] = []
    for view in transcript.conversations:
        parts.extend(_conversation(view, short=short))
    parts.extend(_consensus(transcript))
    parts.append(render_cost(transcript))
    if not short:
        parts.append(_behaviour(transcript))
    return Group(*parts)


def render_prompts(transcript: Transcript) -> Group:
    """What the model saw: the rendered messages of every recorded call, turn by turn, then each colleague's closing
    statement, then the final consensus."""
    parts: list[Any] = []
    for view in transcript.all_conversations():
        for turn in view.turns:
            for call in (turn.data or {}).get("llm_calls", []):
                parts.append(_prompt(f"conversation {view.row.id} turn {turn.idx} {turn.agent}: {call['purpose']}",
                                     call.get("prompt") or []))  # fmt: skip
    if transcript.consensus is not None:
        for side in (transcript.consensus.data or {}).get("sides", []):
            for call in side.get("llm_calls", []):
                parts.append(_prompt(f"{side['agent']}: {call['purpose']} (its side of the consensus)",
                                     call.get("prompt") or []))  # fmt: skip
        parts.append(_prompt("consensus", (transcript.consensus.data or {}).get("prompt") or []))
    return Group(*parts)


def _prompt(title: str, messages: list[dict[str, str]]) -> Text:
    text = Text(f"── prompt: {title}\n", style="bold")
    for message in messages:
        text.append(f"[{message['role']}]\n", style="dim")
        text.append(message["content"] + "\n")
    return text


def render_cost(transcript: Transcript) -> Text:
    cost = transcript.cost()
    purposes = ", ".join(f"{name} {count}" for name, count in sorted(cost.by_purpose.items()))
    models = ", ".join(f"{name} {count}" for name, count in sorted(cost.by_model.items()))
    return Text(
        f"cost: {cost.llm_calls} LLM calls ({purposes}) · by model: {models or 'none'} · {cost.prompt_tokens:,} "
        f"prompt + {cost.completion_tokens:,} completion tokens · {cost.wall_s:.2f} s wall",
        style="dim",
    )


def _conversation(view: ConversationView, *, short: bool) -> list[Any]:
    pad = "  " * view.row.depth
    who = " ↔ ".join(view.row.participants)
    lines: list[Any] = [Text(printable(f"{pad}— {who} ({view.row.stop_reason or view.row.status})"), style="bold")]
    children = {c.row.parent_turn: c for c in view.children}
    for turn in view.turns:
        lines.append(Text(printable(f"{pad}[{turn.idx}] {turn.agent}: {turn.utterance}")))
        if turn.plan:
            lines.append(Text(printable(f"{pad}    plan: {_plan(turn.plan)}"), style="cyan"))
        for query in view.queries.get(turn.id, []):
            lines.append(Text(printable(f"{pad}    {_query(query)}"), style="dim"))
        for note in _notes(turn.data, short=short):
            lines.append(Text(printable(f"{pad}    {note}"), style="yellow"))
        if (child := children.get(turn.idx)) is not None:
            lines.extend(_conversation(child, short=short))
    return lines


def _plan(plan: list[dict[str, Any]]) -> str:
    marks = []
    for r in plan:
        value = f" = {r['value'][:60]}" if r.get("status") == "known" else ""
        marks.append(f"{r['id']} {'✓' if r.get('status') == 'known' else '?'} {r['need'][:50]}{value}")
    return " | ".join(marks)


def _query(query: Any) -> str:
    params = {k: v for k, v in query.params.items() if v not in (None, [], "", 0)}
    outcome = query.skipped or query.error or f"{len(query.hit_ids)} hits"
    return f"{query.kind} {json.dumps(params, ensure_ascii=False)} -> {outcome}"


def _notes(data: dict[str, Any], *, short: bool) -> list[str]:
    notes = []
    if data.get("error"):
        notes.append(f"error: {data['error']['message']}")
    if data.get("approval"):
        notes.append(f"member's approval: {data['approval']}")
    for recruit in recruits_of(data):
        if recruit["status"] == "refused":
            notes.append(f"could not bring in {recruit['request']['member']}: {recruit['reason']}")
    if not short and data.get("update", {}).get("fake_solved"):
        notes.append(f"fake solved (counted; value kept): {', '.join(data['update']['fake_solved'])}")
    return notes


def _consensus(transcript: Transcript) -> list[Any]:
    if transcript.consensus is None:
        return []
    data = transcript.consensus.data
    agreed = "agreed" if data.get("agreed") else "did not agree"
    ratio = data.get("ratio")
    kept = f"{len(data.get('cited', []))} rationales kept, {len(data.get('dropped', []))} dropped"
    return [Text(f"consensus: {agreed}; {kept}" + (f" (ratio {ratio:.2f})" if ratio is not None else ""), "bold")]


def _behaviour(transcript: Transcript) -> Table:
    table = Table(title="behaviour (iAgents §6.3)", show_header=False, title_justify="left")
    values = behaviour(transcript).dict()
    for name in ("rationales_per_plan", "solved_per_update", "solved_ratio", "fake_solved_ratio", "consensus_ratio"):
        value = values[name]
        table.add_row(name.replace("_", " "), "-" if value is None else f"{value:.2f}")
    for name, counts in values["parameter_changes"].items():
        table.add_row(name, ", ".join(f"{k} {v}" for k, v in counts.items()))
    return table
