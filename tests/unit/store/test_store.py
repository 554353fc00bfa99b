from sqlalchemy import func, select

from bot.store import models
from bot.store.db import Database
from bot.store.world import World
from bot.store.world_mirror import mirror_world


async def test_mirroring_twice_adds_nothing(db: Database, sample_world: World) -> None:
    await mirror_world(db, sample_world)
    await mirror_world(db, sample_world)
    async with db.session() as session:
        messages = (await session.execute(select(func.count()).select_from(models.Message))).scalar_one()
        members = (await session.execute(select(func.count()).select_from(models.Member))).scalar_one()
    assert messages == sample_world.message_count()
    assert members == len(sample_world.members)


async def test_migrations_are_idempotent(db: Database) -> None:
    await db.migrate()
    await db.migrate()
