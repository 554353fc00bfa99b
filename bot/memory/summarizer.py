"""One objective summary per distinct session content, made once and kept in the `session_summary` table.

The summary is what fuzzy memory embeds and retrieves: an objective account of the session (names, times, places,
facts; no opinions) that makes session-level retrieval work. It is cached by the session's content hash, so a session
two members share, or identical content in two channels, is summarized once.

    summarizer = SessionSummarizer(db, llm)       # llm=None: extractive summaries only
    made = await summarizer.ensure({content_hash: lines, ...})

Without a language model, or when the model fails, an extractive summary (participants and the most informative
lines) stands in, stored with method "extractive" so it is never mistaken for a model's summary.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.base.prompts import render_prompt
from bot.errors import LLMError
from bot.llm.client import LLMClient
from bot.llm.types import LLMRequest
from bot.memory.sessions import SessionLine
from bot.store.db import Database
from bot.store.session_summaries import add_summaries, stored_summary_hashes


logger = logging.getLogger(__name__)

MAX_WORDS = 120  # what the model is asked for; a summary is embedded whole, and MiniLM reads 256 word pieces
MAX_SUMMARY_CHARS = 2_000  # a rambling model is cut here
MAX_LINE_CHARS = 500  # per message in the prompt, so one pasted wall of text cannot crowd out the rest
EXTRACTIVE_CHARS = 700  # about what MiniLM reads before truncation
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_DATE = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|tonight|yesterday|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"morning|afternoon|evening|week(?:end)?|month|o'clock|[ap]\.?m\.?)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decid\w*|agree\w*|will|going to|plan\w*|book\w*|confirm\w*|deadline|due|owns?|signed|approved|"
    r"cancel\w*|moved?|meet\w*|bring|need|must|promise\w*)\b",
    re.IGNORECASE,
)
_COMMON = frozenset({"i", "i'm", "ok", "okay", "yes", "no", "oh", "hey", "hi", "well", "so", "but", "and", "the"})


@dataclass(frozen=True)
class Summary:
    text: str
    method: str  # llm | extractive
    model: str = ""


class SessionSummarizer:
    def __init__(self, db: Database, llm: LLMClient | None) -> None:
        self.db = db
        self.llm = llm

    async def ensure(self, pending: Mapping[str, Sequence[SessionLine]]) -> int:
        """Make the summaries of the content hashes in `pending` that are not stored yet; returns how many."""
        stored = await stored_summary_hashes(self.db, list(pending))
        missing = [h for h in pending if h not in stored]
        if not missing:
            return 0
        summaries = await asyncio.gather(*(self.summarize(pending[h]) for h in missing))
        return await self._store(dict(zip(missing, summaries, strict=True)))

    async def summarize(self, lines: Sequence[SessionLine]) -> Summary:
        """The model's objective summary of a session, or the extractive one when there is no usable model."""
        if self.llm is not None:
            try:
                text = await _ask_model(self.llm, lines)
            except LLMError as exc:
                logger.warning("session summary fell back to extractive: %s", exc)
            else:
                if text:
                    return Summary(text, "llm", self.llm.model)
        return Summary(extractive_summary(lines), "extractive")

    async def _store(self, summaries: Mapping[str, Summary]) -> int:
        now = datetime.now(UTC)
        rows = [
            {"content_hash": h, "text": s.text, "method": s.method, "model": s.model, "created_at": now}
            for h, s in summaries.items()
        ]
        return await add_summaries(self.db, rows)


async def _ask_model(llm: LLMClient, lines: Sequence[SessionLine]) -> str:
    transcript = [line.transcript()[:MAX_LINE_CHARS] for line in lines]
    request = LLMRequest(
        messages=[
            {"role": "system", "content": render_prompt("summarize_session", "system", max_words=MAX_WORDS)},
            {"role": "user", "content": render_prompt("summarize_session", "user", lines=transcript)},
        ],
        purpose="summarize_session",
        max_tokens=MAX_WORDS * 2,
    )
    result = await llm.complete(request)
    return " ".join(result.text.split())[:MAX_SUMMARY_CHARS]


def extractive_summary(lines: Sequence[SessionLine], *, max_chars: int = EXTRACTIVE_CHARS) -> str:
    """Participants plus the most informative lines (entities, numbers, dates, decisions, distinct words), kept in
    their original order."""
    participants = list(dict.fromkeys(line.sender for line in lines))
    ranked = sorted(range(len(lines)), key=lambda i: (-_informativeness(lines[i].text), i))
    chosen: list[int] = []
    budget = max_chars
    for index in ranked:
        cost = len(lines[index].transcript()) + 3
        if chosen and cost > budget:
            continue
        chosen.append(index)
        budget -= cost
    picked = [lines[i].transcript()[:max_chars] for i in sorted(chosen)]
    return render_prompt("summarize_session", "extractive", participants=participants, count=len(lines), lines=picked)


def _informativeness(text: str) -> float:
    """How much a line tells: distinct content words, with extra weight for what questions ask about: names and
    other capitalised words past the first, numbers and times, dates, and decisions or commitments."""
    words = _WORD.findall(text)
    distinct = {word.lower() for word in words if len(word) > 2}
    entities = {word for word in words[1:] if word[:1].isupper() and word.lower() not in _COMMON}
    numbers = len(_NUMBER.findall(text))
    dates = len(_DATE.findall(text))
    decisions = len(_DECISION.findall(text))
    return len(distinct) + 2.0 * len(entities) + 2.0 * min(numbers, 3) + 3.0 * min(dates, 2) + 3.0 * min(decisions, 2)
