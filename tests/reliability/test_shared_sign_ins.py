"""Web sign-ins belong to the database, not to the process that made them: two `askwith serve` apps on one database
(and a third started later, as after a restart) know the same members, and sign-out on one ends the session on all
of them at once. The session id itself is never stored, only its hash."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import select
from starlette.testclient import TestClient

from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from bot.store.web_sessions import WebSessionStore, token_hash
from bot.web.tokens import MemberClaim, sign_member_token
from tests.conftest import _drop_postgres_database, _postgres_database
from tests.web.harness import SECRET, app_for, post_form, web_settings


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def shared_settings(request: pytest.FixtureRequest, settings: Settings) -> Iterator[Settings]:
    """Settings of processes sharing one database (and one web secret, as a deployment's processes do)."""
    if request.param == "sqlite":
        yield web_settings(settings, web_host="0.0.0.0")
        return
    url, name = asyncio.run(_postgres_database())
    try:
        yield web_settings(settings, web_host="0.0.0.0", database_url=url)
    finally:
        asyncio.run(_drop_postgres_database(name))


def _link(member: str) -> str:
    return sign_member_token(SECRET, MemberClaim(1, member), expires_at=time.time() + 3600)


def _browser(stack: ExitStack, settings: Settings, cookies: TestClient | None = None) -> TestClient:
    """A client of a new serve process; with `cookies`, the same browser as that client (its cookies copied)."""
    client = stack.enter_context(TestClient(app_for(settings)))
    if cookies is not None:
        client.cookies.update(dict(cookies.cookies))
    return client


def test_a_sign_in_is_recognised_by_another_serve_and_after_a_restart(shared_settings: Settings) -> None:
    with ExitStack() as stack:
        first = _browser(stack, shared_settings)
        opened = first.get(f"/conversations?t={_link('alice')}", follow_redirects=False)
        assert opened.status_code == 303
        second = _browser(stack, shared_settings, cookies=first)
        assert second.get("/conversations").status_code == 200
    with ExitStack() as stack:  # every process stopped and started again
        restarted = _browser(stack, shared_settings, cookies=first)
        page = restarted.get("/conversations")
        assert page.status_code == 200 and 'id="signed-in-as" data-handle="alice"' in page.text


def test_sign_out_on_one_serve_ends_the_session_on_the_others_at_once(shared_settings: Settings) -> None:
    with ExitStack() as stack:
        first = _browser(stack, shared_settings)
        first.get(f"/conversations?t={_link('alice')}")
        second = _browser(stack, shared_settings, cookies=first)
        assert second.get("/conversations").status_code == 200
        post_form(first, "/signout", {})
        assert first.get("/conversations").status_code == 401
        assert second.get("/conversations").status_code == 401
        assert second.get("/asks/1").status_code == 401


async def test_the_store_keeps_a_hash_and_sessions_expire(db: Database) -> None:
    async with db.session() as session, session.begin():
        session.add(models.Workspace(platform="local", external_id="acme", name="Acme"))
    store = WebSessionStore(db)
    start = datetime.now(UTC)
    sid = await store.open(workspace_id=1, member="alice", ttl_s=60, now=start)
    async with db.session() as session:
        row = (await session.execute(select(models.WebSession))).scalar_one()
    assert row.token_hash == token_hash(sid) and sid not in (row.token_hash, row.member)
    assert await store.member(sid, now=start + timedelta(seconds=59)) == (1, "alice")
    assert await store.member(sid, now=start + timedelta(seconds=60)) is None
    assert await store.member(token_hash(sid)) is None  # the stored hash signs no one in
    # A later sign-in sweeps the sessions that expired.
    later = await store.open(workspace_id=1, member="bob", ttl_s=60, now=start + timedelta(seconds=61))
    assert await store.count() == 1 and await store.member(later, now=start + timedelta(seconds=62)) == (1, "bob")
    await store.end(later)
    assert await store.member(later, now=start + timedelta(seconds=62)) is None and await store.count() == 0


async def test_migration_0015_matches_the_models(db: Database) -> None:
    def diff(connection: object) -> list[object]:
        context = MigrationContext.configure(connection)  # type: ignore[arg-type]
        found = compare_metadata(context, models.Base.metadata)
        return [d for d in found if "web_session" in str(d) or "action_token" in str(d)]

    async with db.engine.connect() as conn:
        assert await conn.run_sync(diff) == []
