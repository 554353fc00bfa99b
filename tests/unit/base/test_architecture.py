"""The core never imports a platform library, an adapter or an entry point: adapters translate, the core decides."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[3]
CORE = [
    "bot/agents",
    "bot/asks",
    "bot/consent",
    "bot/memory",
    "bot/store",
    "bot/llm",
    "bot/negotiation",
    "bot/platform/runtime.py",
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


def _models_imports(path: Path) -> list[str]:
    """The store's table modules `path` imports (`from bot.store import models` or `bot.store.models`)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" == "bot.store.models"]
            found += [node.module] if node.module == "bot.store.models" else []
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name == "bot.store.models"]
    return found


def test_memory_leaves_tables_and_joins_to_the_store() -> None:
    """Memory says what to read and for whom (a viewer, a search shape); the statements over the store's tables are
    the store's (`bot.store.message_search_sql`, `bot.store.channel_scope`)."""
    bad = {str(p.relative_to(ROOT)): _models_imports(p) for p in sorted((ROOT / "bot" / "memory").rglob("*.py"))}
    assert {path: names for path, names in bad.items() if names} == {}


# ---------------------------------------------------------------------- layer order
# Lowest first. A module may import its own layer or a lower one; an import of a higher layer is an arrow pointing the
# wrong way. The base is what every layer shares (settings, errors, the port, the texts, small shared tools).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("bot/__init__.py", "bot/settings.py", "bot/errors.py", "bot/base", "bot/texts",
              "bot/platform/__init__.py", "bot/platform/port.py")),
    ("store", ("bot/store",)),
    ("llm", ("bot/llm",)),  # a client library: memory's summaries and the agents both call models
    ("memory", ("bot/memory",)),
    ("agents", ("bot/agents",)),
    ("consent", ("bot/consent",)),
    # bot/platform/runtime.py: the contract an adapter fills is a runtime of asks, ingestion and an endpoint, so it
    # sits above the asks it carries and below the adapters that fill it.
    ("asks", ("bot/asks", "bot/negotiation", "bot/bench", "bot/platform/runtime.py")),
    ("surfaces", ("bot/web", "adapters")),
    ("entry points", ("bot/cli", "bot/serve", "bot/__main__.py")),
]  # fmt: skip

# The upward arrows that still exist, as (importing file, imported module). Each is a debt with its reason; a new
# upward arrow fails `test_no_module_imports_a_higher_layer`, and one removed must leave this list too.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    ("bot/platform/port.py", "bot.asks.read_models.answer_view"): "type only (TYPE_CHECKING): the answer it renders",
    ("bot/platform/port.py", "bot.consent.card"): "type only (TYPE_CHECKING): the approval card a port renders",
    # agents <-> consent: an agent's turn leaves through the outbox, and the consent screens read agents' plans.
    ("bot/agents/context.py", "bot.consent.outbox"): "an ask's context holds the outbox every turn leaves through",
    ("bot/agents/conversation.py", "bot.consent.outbox"): "a turn's statements are sent through the outbox",
    ("bot/agents/statements.py", "bot.consent.outbox"): "a statement's verdict comes from the outbox",
    # consent -> asks: approvals are stored as the asks' records.
    ("bot/consent/pending.py", "bot.asks.approval_rows"): "pending approvals are the asks' Approval rows",
    # asks -> surfaces: the benchmark replays worlds through the local workspace adapter.
    ("bot/bench/replay.py", "adapters.local.workspace"): "bench worlds are served by the local workspace port",
}


def _layer(module: str) -> int | None:
    """The layer of a dotted module name (the longest matching prefix wins), None outside bot/ and adapters/."""
    best: tuple[int, int] | None = None
    for rank, (_, parts) in enumerate(LAYERS):
        for part in parts:
            prefix = part.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    return None if best is None else best[0]


def _module(path: Path, root: Path = ROOT) -> str:
    return str(path.relative_to(root).with_suffix("")).removesuffix("/__init__").replace("/", ".")


def _layered_files(root: Path = ROOT) -> list[Path]:
    files: list[Path] = []
    for _, parts in LAYERS:
        for part in parts:
            path = root / part
            files += sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.exists() else []
    return files


def _imported(path: Path) -> list[str]:
    """Every module `path` imports, type-only and function-level imports included (`from bot.texts import answer_texts`
    counts as bot.texts.answer_texts)."""
    names = _imports(path)
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in ("bot", "adapters"):
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def upward_arrows(root: Path = ROOT) -> set[tuple[str, str]]:
    arrows: set[tuple[str, str]] = set()
    for path in _layered_files(root):
        own = _layer(_module(path, root))
        assert own is not None, path
        for name in _imported(path):
            layer = _layer(name)
            if layer is not None and layer > own:
                arrows.add((str(path.relative_to(root)), name))
    return arrows


def test_every_core_module_has_a_layer() -> None:
    layered = set(_layered_files())
    assert [str(p.relative_to(ROOT)) for p in sorted((ROOT / "bot").rglob("*.py")) if p not in layered] == []


def test_no_module_imports_a_higher_layer() -> None:
    new = sorted(upward_arrows() - ALLOWED_UPWARD.keys())
    rows = [f"{src} -> {dst} ({LAYERS[_layer(dst) or 0][0]})" for src, dst in new]
    assert rows == [], "imports of a higher layer:\n" + "\n".join(rows)


def test_the_allowed_arrows_all_still_exist() -> None:
    """An arrow removed from the code leaves the allow-list, so it cannot come back unnoticed."""
    assert sorted(ALLOWED_UPWARD.keys() - upward_arrows()) == []


def test_the_layer_check_sees_an_upward_arrow(tmp_path: Path) -> None:
    """The check itself, on a small tree: memory importing the agents (at module level, in a function or for types
    only) is an upward arrow; memory importing the store is not."""
    (tmp_path / "bot" / "memory").mkdir(parents=True)
    (tmp_path / "bot" / "memory" / "live.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from bot.store.db import Database\n"
        "if TYPE_CHECKING:\n"
        "    from bot.agents.memory_tools import MemoryTools\n"
        "def later():\n"
        "    from bot import agents\n"
    )
    assert upward_arrows(tmp_path) == {
        ("bot/memory/live.py", "bot.agents.memory_tools"),
        ("bot/memory/live.py", "bot.agents"),
    }


# ---------------------------------------------------------------------- who opens database sessions
# A session (`db.session()`) or a connection (`db.engine.connect()`, `.begin()`, `db.read()`) is opened by the store
# (bot/store) and by the asks layer, whose records (bot.asks.models, negotiations) sit above the store; every other
# module asks one of them. A connection opened elsewhere would be listed here with its reason (none is left); a new
# one fails.
SESSION_LAYERS = ("bot/store/", "bot/asks/", "bot/negotiation/", "bot/bench/")
CONNECTIONS_LEFT: dict[str, str] = {}
OPENERS = {"session", "connect", "begin"}
DATABASES = {"db", "_db"}  # what a `Database` is called where its `read()` connection is opened


def session_openers(root: Path = ROOT) -> set[str]:
    """Modules under bot/ and adapters/ that open a database session or connection: a call of an attribute named
    `session` (`db.session()`, `self._db.session()`), `connect`/`begin` on an `engine` (`db.engine.connect()`), or
    `read` on a database (`db.read()`, `self.db.read()`), as paths relative to `root`."""
    found: set[str] = set()
    for top in ("bot", "adapters"):
        for path in sorted((root / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                owner = node.func.value
                on_engine = (
                    isinstance(owner, ast.Attribute)
                    and owner.attr == "engine"
                    or (isinstance(owner, ast.Name) and owner.id == "engine")
                )
                on_db = (isinstance(owner, ast.Name) and owner.id in DATABASES) or (
                    isinstance(owner, ast.Attribute) and owner.attr in DATABASES
                )
                if (
                    node.func.attr == "session"
                    or (node.func.attr in OPENERS and on_engine)
                    or (node.func.attr == "read" and on_db)
                ):
                    found.add(str(path.relative_to(root)))
                    break
    return found


def _outside(paths: set[str]) -> list[str]:
    return sorted(path for path in paths if not path.startswith(SESSION_LAYERS) and path not in CONNECTIONS_LEFT)


def test_only_the_store_and_asks_layers_open_database_sessions() -> None:
    outside = _outside(session_openers())
    assert outside == [], "modules opening a database session outside the store and asks layers:\n" + "\n".join(
        outside
    )


def test_the_connections_left_all_still_exist() -> None:
    """A connection moved into the store leaves the list, so it cannot come back unnoticed."""
    assert sorted(CONNECTIONS_LEFT.keys() - session_openers()) == []


def test_the_session_scan_sees_a_session_opened_in_memory(tmp_path: Path) -> None:
    """The scan itself, on a small tree: memory opening a session (on a database it holds or one it was given) is
    seen; the store opening one, and a mere mention of `session`, are what they are."""
    (tmp_path / "bot" / "memory").mkdir(parents=True)
    (tmp_path / "bot" / "store").mkdir(parents=True)
    (tmp_path / "adapters").mkdir()
    (tmp_path / "bot" / "memory" / "history.py").write_text(
        "async def read(self):\n    async with self._db.session() as session:\n        return session\n"
    )
    (tmp_path / "bot" / "memory" / "live.py").write_text("def opener(db):\n    return db.session()\n")
    (tmp_path / "bot" / "memory" / "types.py").write_text("def held(ask):\n    return ask.session\n")
    (tmp_path / "bot" / "memory" / "keys.py").write_text("async def keys(db):\n    return db.engine.connect()\n")
    (tmp_path / "bot" / "memory" / "rows.py").write_text("async def rows(self):\n    return self.db.read()\n")
    (tmp_path / "bot" / "memory" / "files.py").write_text("def text(path):\n    return path.read()\n")
    (tmp_path / "adapters" / "gateway.py").write_text("async def up(client):\n    await client.connect()\n")
    (tmp_path / "bot" / "store" / "reads.py").write_text("async def read(db):\n    return db.session()\n")
    found = session_openers(tmp_path)
    assert found == {
        "bot/memory/history.py", "bot/memory/live.py", "bot/memory/keys.py", "bot/memory/rows.py", "bot/store/reads.py"
    }  # fmt: skip
    assert _outside(found) == [
        "bot/memory/history.py",
        "bot/memory/keys.py",
        "bot/memory/live.py",
        "bot/memory/rows.py",
    ]
