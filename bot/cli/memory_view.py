"""How `askwith memory search` shows hits: ranked, each with its context, so a person sees what an agent sees."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from bot.cli.printable import folded, printable
from bot.memory.types import ClearHit, FuzzyHit, MessageView


def hits(found: Sequence[ClearHit] | Sequence[FuzzyHit]) -> RenderableType:
    """Clear or fuzzy hits, best first, numbered."""
    return Group(
        *(
            _clear_hit(rank, hit) if isinstance(hit, ClearHit) else _fuzzy_hit(rank, hit)
            for rank, hit in enumerate(found, start=1)
        )
    )


def _clear_hit(rank: int, hit: ClearHit) -> RenderableType:
    m = hit.message
    head = Text.assemble(
        (f"{rank}. ", "bold"),
        (printable(f"#{m.channel_name}"), "cyan"),
        f"  {_when(m.ts)}  ",
        (f"score {hit.score:.3f}", "dim"),
    )
    if hit.duplicates:
        head.append(f"  (+{hit.duplicates} fan-out copies)", "dim")
    lines = [_line(c, highlight=c.id == m.id) for c in hit.context] if hit.context else [_line(m, highlight=True)]
    return Group(head, Padding(Group(*lines), (0, 0, 1, 3), expand=False))


def _fuzzy_hit(rank: int, hit: FuzzyHit) -> RenderableType:
    head = Text.assemble(
        (f"{rank}. ", "bold"),
        (printable(f"#{hit.channel_name}"), "cyan"),
        f"  {_when(hit.first_ts)} - {_when(hit.last_ts)}  ",
        (f"similarity {hit.score:.3f}", "dim"),
    )
    label = "summary" if hit.summary_method == "llm" else "extractive summary (no LLM configured)"
    summary = Text.assemble((f"{label}: ", "italic dim"), printable(folded(hit.summary)))
    body = [summary, *(_line(m, highlight=False) for m in hit.messages)]
    return Group(head, Padding(Group(*body), (0, 0, 1, 3), expand=False))


def _line(message: MessageView, *, highlight: bool) -> Text:
    marker, style = ("> ", "bold") if highlight else ("  ", "dim")
    sender = (printable(f"{message.sender}: "), "green")
    return Text.assemble(marker, (f"{_when(message.ts)} ", "dim"), sender, (printable(folded(message.text)), style))


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")
