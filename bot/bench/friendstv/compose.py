"""The question of a FriendsTV item: composed by a model with the authors' prompt, or by a fixed template offline.

With a model, every composition is cached as one JSON file keyed by the model and the prompt, written as soon as it
arrives: a killed generation resumes where it stopped, and a rerun with the cache gives the same dataset bytes.

    composer = Composer(llm=None)                        # offline: the template
    composer = Composer(llm=client, cache_dir=path)      # the authors' prompt, cached
    composed = composer.compose(first, second, scene_lines, anchor)
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from bot.base.prompts import render_prompt
from bot.bench.friendstv.alignment import ChatLine
from bot.bench.friendstv.friendsqa import detokenize
from bot.bench.friendstv.rationale import Rationale
from bot.llm.client import LLMClient
from bot.llm.types import LLMRequest


TEMPLATE = (
    "{anchor}, two things were said, and the answer needs both. First: {first} Second: {second} "
    "Reply with both answers, the first's then the second's."
)
TEMPLATE_WRITER = "template"
_NUMBERED = re.compile(r"^\s*(\d)\.\s*(.*)$")


@dataclass(frozen=True)
class Composed:
    question: str
    answer: str
    writer: str  # "template" or the model that wrote it


def qa_text(rationale: Rationale) -> str:
    return f"{detokenize(rationale.question.text)}: {detokenize(rationale.answer.text)}"


def template(first: Rationale, second: Rationale, anchor: str) -> Composed:
    """Both questions in one, anchored in their scene (`anchor.scene_anchor`), answerable only together (the gold
    keeps both parts' answers; the scorer needs each)."""
    one, two = detokenize(first.question.text), detokenize(second.question.text)
    answer = f"{detokenize(first.answer.text)}; {detokenize(second.answer.text)}"
    return Composed(TEMPLATE.format(anchor=anchor, first=one, second=two), answer, TEMPLATE_WRITER)


class Composer:
    def __init__(self, *, llm: LLMClient | None, cache_dir: Path | None = None) -> None:
        self.llm = llm
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.calls = 0  # compositions asked of the model (not found in the cache)

    @property
    def writer(self) -> str:
        return self.llm.model if self.llm is not None else TEMPLATE_WRITER

    def compose(self, first: Rationale, second: Rationale, scene_lines: list[ChatLine], anchor: str) -> Composed:
        """`anchor` names the scene for the template; the model reads the scene's dialogue instead."""
        if self.llm is None:
            return template(first, second, anchor)
        prompt = render_prompt(
            "bench_friendstv_compose", "user", dialogue="\n".join(line.text for line in scene_lines),
            first=qa_text(first), second=qa_text(second), first_answer=detokenize(first.answer.text),
            second_answer=detokenize(second.answer.text),
        )  # fmt: skip
        key = hashlib.sha256(f"{self.llm.model}\n{prompt}".encode()).hexdigest()[:32]
        cached = self._cached(key)
        if cached is not None:
            return cached
        composed = self._ask(prompt) or template(first, second, anchor)
        self._store(key, composed)
        return composed

    def _ask(self, prompt: str) -> Composed | None:
        if self.llm is None:
            return None
        request = LLMRequest([{"role": "user", "content": prompt}], purpose="bench_compose", temperature=0.1)
        self.calls += 1
        reply = asyncio.run(self.llm.complete(request)).text
        fields = {int(m.group(1)): m.group(2).strip() for line in reply.splitlines() if (m := _NUMBERED.match(line))}
        if not fields.get(1) or not fields.get(4):
            return None  # unusable reply: the template stands in (recorded as such)
        return Composed(fields[1], fields[4], self.llm.model)

    def _cached(self, key: str) -> Composed | None:
        if self.cache_dir is None or not (self.cache_dir / f"{key}.json").is_file():
            return None
        return Composed(**json.loads((self.cache_dir / f"{key}.json").read_text(encoding="utf-8")))

    def _store(self, key: str, composed: Composed) -> None:
        if self.cache_dir is None:
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        path = self.cache_dir / f"{key}.json"
        path.with_suffix(".tmp").write_text(json.dumps(composed.__dict__, sort_keys=True), encoding="utf-8")
        path.with_suffix(".tmp").replace(path)
