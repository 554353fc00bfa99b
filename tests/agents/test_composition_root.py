"""The composition root (`bot.asks.composition`): which model summarises and which reads hits, what it opens and
closes, and that every site answering asks builds its `AskService` there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from adapters.local.workspace import LocalWorkspace
from bot.asks.composition import AskRoot, Memory, open_root
from bot.errors import LLMNotConfiguredError
from bot.llm.client import LLMClient
from bot.llm.provider import LLMClients
from bot.llm.scripted import ScriptedBackend
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import World


ROOT = Path(__file__).resolve().parents[2]
COMPOSITION = "bot/asks/composition.py"


class Built:
    """A memory factory that remembers which model it was given to write session summaries."""

    def __init__(self) -> None:
        self.summarizer: LLMClient | None | str = "never called"

    def __call__(self, settings: Settings, db: Database, summarizer: LLMClient | None) -> Memory:
        self.summarizer = summarizer
        return Memory(MemoryAccess(clear=ClearMemory(db), fuzzy=None), indexer=None)


def split(settings: Settings) -> Settings:
    """Two endpoints (never called here): the main model, and the private model of the privacy split."""
    return settings.replace(
        llm_base_url="http://main.invalid/v1", llm_model="main-model",
        private_llm_base_url="http://private.invalid/v1", private_llm_model="private-model",
    )  # fmt: skip


async def test_with_the_privacy_split_the_private_model_summarises_and_alone_reads_hits(settings: Settings) -> None:
    built = Built()
    async with open_root(split(settings), memory=built) as root:
        assert root.llms is not None and root.llms.private is not None
        assert root.llm is root.llms.main and root.llm.model == "main-model"
        assert built.summarizer is root.llms.private and root.llms.private.model == "private-model"
        assert root.memory.access.reader is root.llms.private


async def test_without_the_split_the_main_model_summarises_and_no_reader_is_set(settings: Settings) -> None:
    built = Built()
    async with open_root(settings.replace(llm_base_url="http://main.invalid/v1"), memory=built) as root:
        assert root.llms is not None and built.summarizer is root.llms.main
        assert root.memory.access.reader is None


async def test_askwith_ask_summarises_with_the_endpoint_as_askwith_ingest_does(settings: Settings) -> None:
    built = Built()
    scripted = ScriptedBackend(lambda request: "{}")
    async with open_root(split(settings), backend=scripted, memory=built, summaries="endpoint") as root:
        assert isinstance(built.summarizer, LLMClient) and built.summarizer.model == "private-model"
        assert built.summarizer is not root.llm and built.summarizer is not root.memory.access.reader


async def test_a_stand_in_model_gets_extractive_summaries(settings: Settings) -> None:
    built, stand_in = Built(), LLMClient(ScriptedBackend(lambda request: "{}"))
    async with open_root(split(settings), llm=stand_in, memory=built) as root:
        assert root.llm is stand_in and built.summarizer is None and root.memory.access.reader is None


async def test_a_missing_model_is_one_error_before_the_database_opens(settings: Settings) -> None:
    with pytest.raises(LLMNotConfiguredError):
        async with open_root(settings, needs_model=True, memory=Built()):
            pass
    assert not settings.data_dir.exists() or not any(settings.data_dir.iterdir())


async def test_without_a_model_a_served_process_starts_but_builds_no_asks(settings: Settings) -> None:
    built = Built()
    async with open_root(settings, memory=built) as root:
        assert root.llms is None and built.summarizer is None
        with pytest.raises(LLMNotConfiguredError):
            root.ask_service(LocalWorkspace(World(id="w", name="w")), 1)


async def test_an_ask_service_shares_the_root_and_adds_the_workspace_admins(sqlite_db: Database) -> None:
    settings = Settings(embedder="hash", web_admins="root")
    llm = LLMClient(ScriptedBackend(lambda request: "{}"))
    root = AskRoot.over(settings, sqlite_db, LLMClients(llm), summarizer=None, memory=Built())
    port = LocalWorkspace(World(id="w", name="w"))
    plain, local = root.ask_service(port, 7), root.ask_service(port, 7, admins=["alice"])
    assert (plain.db, plain.llm, plain.memory, plain.workspace_id) == (sqlite_db, llm, root.memory.access, 7)
    assert plain.settings.web_admins == "root" and local.settings.web_admins == "root,alice"
    live = MemoryAccess(clear=ClearMemory(sqlite_db), fuzzy=None)
    assert root.ask_service(port, 7, memory=live).memory is live


# ---------------------------------------------------------------------- who builds asks
# The places outside the composition root that would still put an `AskService` together, with their reason: none.
# The adapters build their workspaces' asks with the factory `askwith serve` hands them (`AskRoot.ask_service`).
BUILT_ELSEWHERE: dict[str, str] = {}
# What only the composition root calls, outside the module defining it.
ROOT_ONLY = {"AskService": "bot/asks/service.py", "open_llm_clients": "bot/llm/provider.py"}
SITES = ["bot/serve/runtime.py", "bot/cli/ask.py", "bot/bench/replay.py", "bot/bench/runner.py"]


def _calls(path: Path) -> set[str]:
    """The names called in `path`: `f(...)`, `x.f(...)` and `Cls.over(...)` (as `Cls.over`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                found.add(func.id)
            elif isinstance(func, ast.Attribute):
                found.add(func.attr)
                if isinstance(func.value, ast.Name):
                    found.add(f"{func.value.id}.{func.attr}")
    return found


def _sources() -> list[Path]:
    return sorted([*(ROOT / "bot").rglob("*.py"), *(ROOT / "adapters").rglob("*.py")])


def test_asks_and_their_models_are_built_by_the_composition_root_only() -> None:
    builders: dict[str, set[str]] = {name: set() for name in [*ROOT_ONLY, "MemoryServices.over"]}
    for path in _sources():
        called = _calls(path)
        for name in builders:
            if name in called:
                builders[name].add(path.relative_to(ROOT).as_posix())
    assert builders["AskService"] == {COMPOSITION, *BUILT_ELSEWHERE}
    assert builders["open_llm_clients"] == {COMPOSITION}
    assert builders["MemoryServices.over"] <= {COMPOSITION, "bot/memory/services.py"}


@pytest.mark.parametrize("site", SITES)
def test_serve_the_cli_and_the_bench_go_through_the_composition_root(site: str) -> None:
    tree = ast.parse((ROOT / site).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "bot.asks.composition" in imported
    assert not {"AskService", "open_llm_clients", "MemoryServices.over", "open_memory"} & _calls(ROOT / site)
