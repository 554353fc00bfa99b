"""Several processes (like `askwith serve` and `askwith worker` started together) migrating one fresh database at
once. Before: the second crashed on PostgreSQL with a duplicate `alembic_version` row (or a table that already
exists). After: migrations take a lock (a PostgreSQL advisory lock; a lock file beside a SQLite file), every
process comes up, and the schema is at head once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import text

from bot.settings import Settings
from bot.store.db import Database
from tests.conftest import _drop_postgres_database, _postgres_database


PROCESSES = 4
MIGRATE = textwrap.dedent(
    """
    import asyncio, os, sys, time
    from pathlib import Path
    from bot.settings import Settings
    from bot.store.db import Database

    go = Path(sys.argv[2])
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:  # start together, as close as processes can
        time.sleep(0.005)

    async def main() -> None:
        db = await Database.open(Settings(data_dir=Path(sys.argv[3])), url=sys.argv[1])
        await db.close()

    asyncio.run(main())
    """
)


def _migrate_together(url: str, tmp_path: Path) -> list[subprocess.CompletedProcess[str]]:
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE, url, str(go), str(tmp_path / "data")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(PROCESSES)
    ]
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


async def _head_rows(url: str, settings: Settings) -> list[str]:
    db = await Database.open(settings, url=url, migrate=False)
    try:
        async with db.session() as session:
            return list((await session.execute(text("SELECT version_num FROM alembic_version"))).scalars())
    finally:
        await db.close()


async def _check(url: str, tmp_path: Path, settings: Settings) -> None:
    results = await asyncio.to_thread(_migrate_together, url, tmp_path)
    failures = [r.stderr.strip().splitlines()[-1:] for r in results if r.returncode != 0]
    assert failures == []
    assert len(await _head_rows(url, settings)) == 1


@pytest.mark.postgres
async def test_processes_migrate_a_fresh_postgres_database_together(tmp_path: Path, settings: Settings) -> None:
    url, name = await _postgres_database()
    try:
        await _check(url, tmp_path, settings)
    finally:
        await _drop_postgres_database(name)


async def test_processes_migrate_a_fresh_sqlite_file_together(tmp_path: Path, settings: Settings) -> None:
    await _check(f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}", tmp_path, settings)
