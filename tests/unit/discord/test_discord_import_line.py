"""The Discord adapter's ask modules import each other in a line, as the Slack adapter's do: the port knows nothing
of answers or views, the buttons nothing of the services or the asks above them. Every import counts, including
those inside functions and under TYPE_CHECKING (a lazy import is a circle all the same)."""

from __future__ import annotations

import ast
from pathlib import Path

import adapters.discord


ROOT = Path(adapters.discord.__file__).parent
LINE = ["port", "gateway_sync", "views.ask_controls", "answers", "services", "progress", "chat_asks"]


def imports_of(module: str) -> set[str]:
    tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("adapters.discord"):
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            found.update(n.removeprefix("adapters.discord.") for n in names)
    return found & set(LINE)


def test_each_module_imports_only_those_below_it() -> None:
    for rank, module in enumerate(LINE):
        above = set(LINE[rank:])
        assert not imports_of(module) & above, f"{module} imports {sorted(imports_of(module) & above)}"


def test_the_port_knows_nothing_of_answers_or_ask_views() -> None:
    assert imports_of("port") == set()
