"""Admin pages: every ask (failures first), ingestion status per channel and member, bench reports."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bot.web import texts
from bot.web.access import Identity
from bot.web.auth import db, require_identity
from bot.web.records.asks import recent_asks
from bot.web.records.ingestion import channel_status, member_status
from bot.web.records.negotiations import negotiations_of
from bot.web.render import page


async def _admin(request: Request) -> Identity | Response:
    identity = await require_identity(request)
    if not identity.is_admin:
        return page(request, "error.html", identity=identity, status_code=403, title=texts.FORBIDDEN_TITLE,
                    message=texts.ADMINS_ONLY)  # fmt: skip
    return identity


async def all_asks(request: Request) -> Response:
    identity = await _admin(request)
    if isinstance(identity, Response):
        return identity
    asks = await recent_asks(db(request))
    failed = [a for a in asks if a.status == "failed"]
    negotiations = await negotiations_of(db(request), None)
    return page(request, "admin_asks.html", identity=identity, asks=asks, failed=failed, negotiations=negotiations)


async def ingestion(request: Request) -> Response:
    identity = await _admin(request)
    if isinstance(identity, Response):
        return identity
    channels = await channel_status(db(request))
    members = await member_status(db(request))
    return page(request, "admin_ingestion.html", identity=identity, channels=channels, members=members)


async def bench(request: Request) -> Response:
    identity = await _admin(request)
    if isinstance(identity, Response):
        return identity
    return page(request, "admin_bench.html", identity=identity, reports=[], empty=texts.NO_BENCH_REPORTS)


routes = [
    Route("/admin", all_asks, methods=["GET"]),
    Route("/admin/ingestion", ingestion, methods=["GET"]),
    Route("/admin/bench", bench, methods=["GET"]),
]
