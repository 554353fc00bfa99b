"""Rendering a transcript for the terminal, as one member may see it (`bot.asks.read_models.ask_view`): what each agent
let out to them, their own agent's plans, memory queries and notes, sub-conversations, consensus, cost; the paper's
behaviour metrics and every agent's internals only with raw access (`ASKWITH_ADMIN_RAW_PROMPTS`, logged by the caller).

    render_transcript(transcript)                              # as the member who asked sees it
    render_transcript(transcript, viewer=Viewer("bob"))        # as bob
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from bot.asks.metrics import behaviour
from bot.asks.read_models.ask_view import AskView, ConversationView, OwnTurn, Viewer, every_conversation, view_for
from bot.asks.read_models.transcripts import Transcript
from bot.cli.printable import printable
from bot.texts import answer_texts, transcript_texts


def render_transcript(transcript: Transcript, *, viewer: Viewer | None = None, short: bool = False) -> Group:
    """`viewer`: whom it is shown to (the member who asked when None)."""
    view = view_for(transcript, viewer or Viewer(transcript.ask.requester))
    parts: list[Any] = []
    for conversation in view.conversations:
        parts.extend(_conversation(conversation, short=short))
    parts.extend(_consensus(view))
    parts.append(render_cost(transcript, detail=view.viewer.raw))
    if not short and view.viewer.raw:  # figures over every agent's plans: a raw reader's
        parts.append(_behaviour(transcript))
    return Group(*parts)


def render_prompts(transcript: Transcript, *, viewer: Viewer | None = None) -> Group:
    """What the model saw, as far as `viewer` may read it (their own agent's calls; all with raw access): the
    rendered messages of every recorded call, turn by turn, then the closing statements, then the consensus."""
    view = view_for(transcript, viewer or Viewer(transcript.ask.requester))
    parts: list[Any] = []
    for conversation in every_conversation(view.conversations):
        for turn in conversation.turns:
            for call in turn.own.prompts if turn.own is not None else []:
                parts.append(_prompt(f"conversation {conversation.id} turn {turn.idx} {turn.agent}: {call['purpose']}",
                                     call.get("prompt") or []))  # fmt: skip
    if view.consensus is not None:
        if view.consensus.prompt:
            parts.append(_prompt("consensus", view.consensus.prompt))
    return Group(*parts)


def _prompt(title: str, messages: list[dict[str, str]]) -> Text:
    text = Text(f"── prompt: {title}\n", style="bold")
    for message in messages:
        text.append(f"[{message['role']}]\n", style="dim")
        text.append(message["content"] + "\n")
    return text


def render_cost(transcript: Transcript, *, detail: bool = False) -> Text:
    """The ask's cost; `detail` (raw access): by purpose and model too (which calls each agent needed tells what
    its memory gave it)."""
    cost = transcript.cost()
    purposes = ", ".join(f"{name} {count}" for name, count in sorted(cost.by_purpose.items()))
    models = ", ".join(f"{name} {count}" for name, count in sorted(cost.by_model.items()))
    split = f" ({purposes}) · by model: {models or 'none'}" if detail else ""
    return Text(
        f"cost: {cost.llm_calls} LLM calls{split} · {cost.prompt_tokens:,} "
        f"prompt + {cost.completion_tokens:,} completion tokens · {cost.wall_s:.2f} s wall",
        style="dim",
    )


def _conversation(view: ConversationView, *, short: bool) -> list[Any]:
    pad = "  " * view.depth
    who = " ↔ ".join(view.participants)
    lines: list[Any] = [Text(printable(f"{pad}— {who} ({view.stop_reason or view.status})"), style="bold")]
    for turn in view.turns:
        lines.append(
            Text(printable(f"{pad}[{turn.idx}] {turn.agent}: {turn.said or transcript_texts.said_to_others()}"))
        )
        if turn.own is not None and turn.own.plan:
            lines.append(Text(printable(f"{pad}    plan: {_plan(turn.own.plan)}"), style="cyan"))
        if turn.own is not None:
            for query in turn.own.searches:
                lines.append(Text(printable(f"{pad}    {_query(query)}"), style="dim"))
        elif turn.searched:
            lines.append(Text(printable(f"{pad}    {answer_texts.tried_search(turn.agent)}"), style="dim"))
        for member, question in turn.asked:
            lines.append(Text(printable(f"{pad}    asked {member}'s agent: {question}"), style="dim"))
        for note in _notes(turn.own) if turn.own is not None else []:
            lines.append(Text(printable(f"{pad}    {note}"), style="yellow"))
        for child in turn.subs:
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


def _notes(own: OwnTurn) -> list[str]:
    notes = []
    if own.error:
        notes.append(f"error: {own.error.get('message', own.error)}")
    if own.approval:
        notes.append(f"member's approval: {own.approval}")
    for recruit in own.recruits:
        if recruit["status"] == "refused":
            notes.append(f"could not bring in {recruit['request']['member']}: {recruit['reason']}")
    return notes


def _consensus(view: AskView) -> list[Any]:
    if view.consensus is None or not view.answer_readable:
        return []
    consensus = view.consensus
    agreed = "agreed" if consensus.agreed else "did not agree"
    kept = f"{len(consensus.rationales)} of your agent's rationales kept"
    ratio = f" (ratio {consensus.ratio:.2f})" if consensus.ratio is not None else ""
    return [Text(f"consensus: {agreed}; {kept}{ratio}", "bold")]


def _behaviour(transcript: Transcript) -> Table:
    table = Table(title="behaviour (iAgents §6.3)", show_header=False, title_justify="left")
    values = behaviour(transcript).dict()
    for name in ("rationales_per_plan", "solved_per_update", "solved_ratio", "fake_solved_ratio", "consensus_ratio"):
        value = values[name]
        table.add_row(name.replace("_", " "), "-" if value is None else f"{value:.2f}")
    for name, counts in values["parameter_changes"].items():
        table.add_row(name, ", ".join(f"{k} {v}" for k, v in counts.items()))
    return table
