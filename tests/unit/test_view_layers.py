"""Layer rule: what people read of an ask is rendered from their `AskView` (`bot.asks.ask_view`). Only the modules that
hand a loaded record straight to `view_for` (or write and run asks, or compute operators' figures) read the stored
ask; no page, adapter or text module touches stored turns, searches or the consensus record."""

from __future__ import annotations

import ast
from pathlib import Path


ROOT = Path(__file__).parents[2]
RECORD_MODULE = "bot.asks.transcripts"
STORED = {"Turn", "Consensus", "MemoryQuery"}  # bot.asks.models rows holding agents' internals
# Readers of the stored ask: the view itself and the modules that pass what they load to it; the writers and the
# runner of asks; the member's own sharing log (their own agent's turns); operators' figures (bench, metrics); a
# follow-up's background, which keeps an earlier answer only for readers every outbox record of it named.
READERS = {
    "bot/asks/ask_view.py", "bot/asks/answer_view.py", "bot/web/records/transcript.py", "bot/cli/transcript_view.py",
    "bot/cli/transcripts.py", "bot/cli/ask.py", "bot/asks/transcripts.py", "bot/asks/metrics.py",
    "bot/bench/runner.py", "bot/bench/citations.py", "bot/asks/service.py", "bot/asks/record.py",
    "bot/asks/live_record.py", "bot/asks/delivery.py", "bot/asks/member_views.py", "bot/asks/background.py",
}  # fmt: skip


def _reads_the_record(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == RECORD_MODULE:
            found.append(f"imports {RECORD_MODULE}")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module == "bot.asks"
            and any(a.name == "transcripts" for a in node.names)
        ):
            found.append(f"imports {RECORD_MODULE}")
        elif isinstance(node, ast.ImportFrom) and node.module == "bot.asks.models":
            found += [f"imports models.{a.name}" for a in node.names if a.name in STORED]
        elif isinstance(node, ast.Attribute) and node.attr in STORED and isinstance(node.value, ast.Name):
            if node.value.id == "models":
                found.append(f"reads models.{node.attr}")
    return found


def test_only_the_view_and_its_loaders_read_stored_asks() -> None:
    offenders = {}
    for path in [*ROOT.joinpath("bot").rglob("*.py"), *ROOT.joinpath("adapters").rglob("*.py")]:
        name = path.relative_to(ROOT).as_posix()
        if name in READERS or name.startswith(("bot/store/", "bot/asks/models")):
            continue
        if found := _reads_the_record(ast.parse(path.read_text(encoding="utf-8"))):
            offenders[name] = sorted(set(found))
    assert offenders == {}, "render from bot.asks.ask_view.view_for instead"


def test_the_loaders_hand_what_they_load_to_the_view() -> None:
    for name in ("bot/asks/answer_view.py", "bot/web/records/transcript.py", "bot/cli/transcript_view.py"):
        assert "view_for(" in ROOT.joinpath(name).read_text(encoding="utf-8"), name
