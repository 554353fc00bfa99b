"""How the stand-in reads chat lines: facts whose words hold brackets, words by their stem, and the line said with an
answering one that names what the answer leaves out."""

from __future__ import annotations

import json

from bot.base.prompts import render_prompt
from bot.llm.standin.model import scripted_model
from bot.llm.standin.reading import HIT, exchange, fact_in, filling
from bot.llm.types import LLMRequest


def _hit(raw: str) -> dict[str, str]:
    found = HIT.match(raw)
    assert found is not None
    fields = {k: v or "" for k, v in found.groupdict().items()}
    return fields | {"lowered": fields["text"].lower(), "sender": fields["sender"].lower()}


def test_a_stated_fact_keeps_the_brackets_of_its_words_and_a_cut_value_is_no_fact() -> None:
    said = "Found: How did Ann greet Leo: oh [takes phone] hi there [laughs] [c-12, d:c-13]; Where is Leo: Rome [c-9]."
    assert fact_in(said, "How did Ann greet Leo") == ("oh [takes phone] hi there [laughs]", "c-12, d:c-13")
    assert fact_in(said, "Where is Leo") == ("Rome", "c-9")
    # The share screen cut the value: nothing to learn from it (its "source" is no id either).
    assert fact_in("Found: Where is Leo: [\u2026]. [thread].", "Where is Leo") is None


def test_a_word_is_read_by_its_stem() -> None:
    line = _hit("[c-4] #ann-bo 2026-01-02 10:00 ann: (starts to cry) stop it!")
    assert filling([line], "Why is Ann crying", whole_history=False) == [line]


def test_the_answer_cites_the_line_said_with_it_that_names_what_it_leaves_out() -> None:
    lines = [
        _hit("[c-1] #ann-bo 2026-01-02 10:00 bo: hello? oh! ann, it's leo calling from rome."),
        _hit("[c-2] #ann-bo 2026-01-02 10:00 ann: calling from rome! [takes phone] ciao, caro."),
        _hit("[c-3] #ann-bo 2026-01-05 09:00 bo: leo sent a postcard."),  # another day: another talk
        _hit("[c-4] #bo-cy 2026-01-02 10:00 cy: leo is back."),  # another conversation
    ]
    need = "How did Ann greet Leo on the phone"
    assert exchange(lines, [lines[1]], need) == [lines[0]]
    assert exchange(lines, [lines[0], lines[1]], need) == []  # the cited lines already name Leo


def test_a_value_it_passes_on_cites_the_line_said_with_the_answering_one() -> None:
    """What leaves an agent carries the exchange too, not only the consensus that reads it."""
    plan = [{"id": "r1", "need": "How did Ann greet Leo on the phone", "status": "unknown", "value": "", "source": ""}]
    hits = [
        "[c-1] #ann-bo 2026-01-02 10:00 bo: hello? oh! ann, it's leo calling from rome.",
        "[c-2] #ann-bo 2026-01-02 10:00 ann: [takes phone] i greet you, caro.",
        "[c-3] #ann-bo 2026-01-05 09:00 bo: leo sent a postcard.",
    ]
    system = render_prompt("agent", "system", me="ann", grounding="", privacy_prompt=False)
    task = render_prompt("agent", "task", question="How did Ann greet Leo on the phone?", asker="bo", me="ann")
    act = render_prompt(
        "agent", "act", turn=1, plan=json.dumps(plan), searched=1, new=len(hits), hits=hits, cut=0, earlier=0,
        whole_history=False, blackboard=[], recruits=[],
    )  # fmt: skip
    messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]
    reply = json.loads(scripted_model(LLMRequest([*messages, {"role": "user", "content": act}], purpose="act")))
    [learned] = reply["learned"]
    assert learned["source"] == "c-2, c-1"  # the greeting, and the line that says who called
