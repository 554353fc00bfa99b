"""The offline demo's first answers: each example the first screen offers is answered with the line that holds the
fact (not the question line that asked for it), said once, first."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.web.texts import SAMPLE_ASKS
from tests.e2e.cli_helpers import askwith


ANSWERS = {  # what each example's answer must hold: words of the line that answers it in the sample's memory
    "Which room is booked for the rehearsal?": "Room 4B",
    "What is the budget for the launch party?": "4,000 euros",
}


@pytest.mark.parametrize(("colleague", "question"), SAMPLE_ASKS["acme"])
def test_the_welcome_examples_are_answered_with_the_fact(tmp_path: Path, colleague: str, question: str) -> None:
    done = askwith(tmp_path, "ask", question, "-w", "acme", "--as", "alice", "--with", colleague, "--scripted")
    assert done.returncode == 0, done.stderr
    answer = " ".join(done.stdout.split("Based on:")[0].split())  # the answer itself, before its sources
    assert ANSWERS[question] in answer.replace("│", " ").replace("  ", " "), done.stdout
    assert "more lines" not in done.stdout and question.rstrip("?") not in answer, done.stdout
