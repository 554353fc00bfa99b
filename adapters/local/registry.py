"""Find a local workspace by name, file or id, and keep its live state under the data directory.

    workspaces = LocalWorkspaces(settings)
    port = workspaces.open("acme")      # the bundled sample
    port = workspaces.open("friendstv") # built from the InformativeBench data (ASKWITH_BENCH_DATA_DIR)
    port = workspaces.open("team.json") # a world file: that file itself is the workspace's state
    workspaces.world_id("acme")         # the id later commands find its memory by

A built-in workspace is built once and then lives in `<data dir>/workspaces/<id>.json`, so what askwith posts
into it (answers, hidden agent threads) is still there for the next command. A world file given by path stays where
it is; its id is remembered, so later commands can name the workspace by id instead of by path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from adapters.local.workspace import LocalWorkspace
from bot.errors import UnknownWorkspaceError, WorkspaceError
from bot.settings import Settings
from bot.store.world import World
from memory_ingest.sources.friendstv import load_friendstv


SAMPLES_DIR = Path(__file__).parent / "samples"

WorldBuilder = Callable[[Settings], World]


def _acme(settings: Settings) -> World:
    return World.load(SAMPLES_DIR / "acme.json")


def _friendstv(settings: Settings) -> World:
    return load_friendstv(settings.require("bench_data_dir"))


BUILT_IN: dict[str, WorldBuilder] = {"acme": _acme, "friendstv": _friendstv}


class LocalWorkspaces:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = settings.data_dir / "workspaces"
        self.index_path = self.root / "index.json"  # world id -> path of a world file opened by path

    def open(self, spec: str) -> LocalWorkspace:
        """The workspace `spec` names (built-in name, path to a world file, or id of one opened before)."""
        if _is_path(spec):
            return self._open_file(Path(spec))
        if (path := self._files().get(spec)) is not None:
            return self._open_file(path)
        state = self.root / f"{spec}.json"
        if state.is_file():
            return LocalWorkspace.load(state)
        if (build := BUILT_IN.get(spec)) is not None:
            workspace = LocalWorkspace(build(self.settings), path=self.root / f"{spec}.json")
            workspace.save()
            return workspace
        raise UnknownWorkspaceError(spec, self.known())

    def world_id(self, spec: str) -> str:
        """The id of the workspace `spec` names, without building it."""
        if _is_path(spec):
            return World.load(spec).id
        if spec in self._files() or (self.root / f"{spec}.json").is_file() or spec in BUILT_IN:
            return spec
        raise UnknownWorkspaceError(spec, self.known())

    def known(self) -> list[str]:
        saved = {p.stem for p in self.root.glob("*.json") if p != self.index_path}
        return sorted(set(BUILT_IN) | saved | set(self._files()))

    # ------------------------------------------------------------------ world files opened by path
    def _open_file(self, path: Path) -> LocalWorkspace:
        workspace = LocalWorkspace.load(path)
        files = self._files()
        if files.get(workspace.world.id) != path.resolve():
            files[workspace.world.id] = path.resolve()
            self._write_files(files)
        return workspace

    def _files(self) -> dict[str, Path]:
        if not self.index_path.is_file():
            return {}
        try:
            return {key: Path(value) for key, value in json.loads(self.index_path.read_text("utf-8")).items()}
        except (json.JSONDecodeError, AttributeError) as exc:
            raise WorkspaceError(f"The workspace index {self.index_path} is not valid: {exc}") from exc

    def _write_files(self, files: dict[str, Path]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.index_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({k: str(v) for k, v in sorted(files.items())}, indent=1) + "\n", "utf-8")
        tmp.replace(self.index_path)


def _is_path(spec: str) -> bool:
    return spec.endswith(".json") or "/" in spec or "\\" in spec
