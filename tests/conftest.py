"""Shared fixtures: databases (SQLite and PostgreSQL), the sample workspace, a mirrored store, a directory in memory.

`mirror_world` (re-exported from `bot.store.world_mirror`) writes a World straight into the store.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world
from tests.fakes.openai_server import FakeOpenAIServer


__all__ = ["mirror_world"]  # kept importable from here for tests written before it moved into bot.store

SAMPLE_WORKSPACE = Path(__file__).parent.parent / "adapters" / "local" / "samples" / "acme.json"
# An admin connection to a PostgreSQL server; each test gets a database of its own, dropped afterwards.
POSTGRES_ADMIN_URL = os.environ.get("ASKWITH_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
# CI sets this so a missing server fails the run instead of skipping the PostgreSQL half.
REQUIRE_POSTGRES = os.environ.get("ASKWITH_REQUIRE_POSTGRES", "") == "1"
# pytest-xdist workers export COLUMNS=80, and a rich console built at import keeps the width it read then, whatever
# width a test's CliRunner environment gives later: without it, each console reads the width when it prints.
os.environ.pop("COLUMNS", None)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # Test worlds are tiny, so every agent would read its member's whole history instead of searching; most tests
    # exercise the search path, and whole-history mode has tests of its own (tests/agents/test_agents_v2.py).
    return Settings(data_dir=tmp_path / "data", embedder="hash", whole_history=False)


MEMORY_FS = Path("/dev/shm")  # Linux's tmpfs: files kept in memory


@pytest.fixture
def memory_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory in memory (tmpfs) when the machine has one, else under tmp_path; removed afterwards. For a store
    a test writes after every step (the oracles' fuzzy index): on disk each write waits for the disk to sync, which
    was half of a 1,000-step oracle's time. The store's code is the same either way.

        index = VectorIndex.from_settings(settings.replace(data_dir=memory_dir))
    """
    if not (MEMORY_FS.is_dir() and os.access(MEMORY_FS, os.W_OK)):
        yield tmp_path / "in-memory"
        return
    path = Path(tempfile.mkdtemp(prefix="askwith-test-", dir=MEMORY_FS))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sample_world() -> World:
    return World.load(SAMPLE_WORKSPACE)


async def _postgres_database() -> tuple[str, str] | None:
    admin = make_url(POSTGRES_ADMIN_URL)
    name = f"askwith_test_{uuid.uuid4().hex[:12]}"
    try:
        conn = await asyncpg.connect(admin.render_as_string(hide_password=False).replace("+asyncpg", ""))
    except (OSError, asyncpg.PostgresError) as exc:
        if REQUIRE_POSTGRES:
            raise
        pytest.skip(f"PostgreSQL not reachable at {admin.host}:{admin.port}: {exc}")
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    url = admin.set(drivername="postgresql+asyncpg", database=name).render_as_string(hide_password=False)
    return url, name


async def _drop_postgres_database(name: str) -> None:
    admin = make_url(POSTGRES_ADMIN_URL)
    conn = await asyncpg.connect(admin.render_as_string(hide_password=False).replace("+asyncpg", ""))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def db(request: pytest.FixtureRequest, settings: Settings) -> AsyncIterator[Database]:
    """A migrated, empty database: once on SQLite, once on PostgreSQL."""
    pg_name = None
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{settings.data_dir / 'test.db'}"
    else:
        url, pg_name = await _postgres_database()
    database = await Database.open(settings, url=url)
    try:
        yield database
    finally:
        await database.close()
        if pg_name:
            await _drop_postgres_database(pg_name)


@pytest.fixture
async def sqlite_db(settings: Settings) -> AsyncIterator[Database]:
    """A migrated SQLite database, for tests that need not run on both engines."""
    database = await Database.open(settings, url=f"sqlite+aiosqlite:///{settings.data_dir / 'test.db'}")
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAIServer]:
    """A fake OpenAI-compatible server on a free loopback port (see tests/fakes/openai_server.py)."""
    server = FakeOpenAIServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture(scope="session")
def bench_data_dir() -> Path:
    """The InformativeBench source data (ASKWITH_BENCH_DATA_DIR); tests needing it skip when it is unset."""
    data_dir = Settings.load(env_file=None).bench_data_dir
    if data_dir is None:
        pytest.skip("ASKWITH_BENCH_DATA_DIR is not set")
    return data_dir
