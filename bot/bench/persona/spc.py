"""Read Synthetic-Persona-Chat conversations (test + valid splits; the train split is not available)."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from bot.errors import BenchDataError


SPLITS = ("test", "valid")
SPC_DIR = Path("sources") / "synthetic-persona-chat"
_LINE_RE = re.compile(r"^\s*User ([12])\s*:\s*(.*)$", re.IGNORECASE)
_NAME_PLACEHOLDER_RE = re.compile(r"\[user ([12])(?:'s)?(?: name)?\]", re.IGNORECASE)
_ANY_PLACEHOLDER_RE = re.compile(r"\[[^\]]*\]")


@dataclass(frozen=True)
class Conversation:
    source: str  # "test:17" = split and 0-based row
    lines: tuple[tuple[int, str], ...]  # (1 or 2, text) in order

    def text(self) -> str:
        return "\n".join(text for _, text in self.lines)


def parse_lines(raw: str) -> tuple[tuple[int, str], ...]:
    """`User 1: ...` / `User 2: ...` lines; an unlabeled line continues the previous one."""
    lines: list[tuple[int, str]] = []
    for row in raw.splitlines():
        match = _LINE_RE.match(row)
        if match:
            lines.append((int(match.group(1)), match.group(2).strip()))
        elif row.strip() and lines:
            speaker, text = lines[-1]
            lines[-1] = (speaker, f"{text} {row.strip()}")
    return tuple((speaker, text) for speaker, text in lines if text)


def name_speakers(conversation: Conversation, first: str, second: str) -> Conversation | None:
    """Replace `[User 1's name]`-style placeholders; None when other placeholders remain (e.g. `[city]`)."""
    names = {"1": first, "2": second}
    lines = tuple((s, _NAME_PLACEHOLDER_RE.sub(lambda m: names[m.group(1)], t)) for s, t in conversation.lines)
    if any(_ANY_PLACEHOLDER_RE.search(text) for _, text in lines):
        return None
    return Conversation(conversation.source, lines)


def load_conversations(data_dir: Path) -> list[Conversation]:
    conversations: list[Conversation] = []
    for split in SPLITS:
        path = Path(data_dir) / SPC_DIR / f"Synthetic-Persona-Chat_{split}.csv"
        if not path.is_file():
            raise BenchDataError(f"Synthetic-Persona-Chat data not found: {path} (check ASKWITH_BENCH_DATA_DIR).")
        with path.open(newline="", encoding="utf-8") as handle:
            for row_number, row in enumerate(csv.DictReader(handle)):
                lines = parse_lines(row["Best Generated Conversation"])
                conversations.append(Conversation(f"{split}:{row_number}", lines))
    return conversations
