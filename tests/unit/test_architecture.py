"""The core never imports a platform library, an adapter or an entry point: adapters translate, the core decides."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
CORE = [
    "bot/agents",
    "bot/asks",
    "bot/consent",
    "bot/memory",
    "bot/store",
    "bot/llm",
    "bot/negotiation",
    "bot/platforms.py",
]
FORBIDDEN = ("slack_bolt", "slack_sdk", "discord", "adapters", "bot.cli", "bot.serve", "bot.web", "starlette")


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _core_files() -> list[Path]:
    files: list[Path] = []
    for part in CORE:
        path = ROOT / part
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_module_imports_no_platform_adapter_or_entry_point(path: Path) -> None:
    bad = [name for name in _imports(path) if name.split(".")[0] in FORBIDDEN or name.startswith(FORBIDDEN)]
    assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"


def test_adapters_depend_on_the_core_not_on_the_composition_root() -> None:
    for path in sorted((ROOT / "adapters").rglob("*.py")):
        bad = [name for name in _imports(path) if name.startswith(("bot.serve", "bot.cli"))]
        assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"
