"""Admin pages: every ask (failures first), ingestion status per channel and member, bench reports."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from bot.asks.read_models.ask_summaries import recent_asks
from bot.asks.read_models.bench_reports import find_reports, plot_file, show_report
from bot.asks.read_models.ingestion import channel_status, member_status, memory_sources, object_problems
from bot.asks.read_models.negotiations import negotiations_of
from bot.bench.report_tables import SCRIPTED_NOTE
from bot.web import texts
from bot.web.access import Identity
from bot.web.auth import config, db, require_identity
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
    raw = config(request).settings.admin_raw_prompts  # answers rest on what went to their audiences only
    asks = [
        a.seen_by(identity.member, raw=raw) for a in await recent_asks(db(request), workspace_id=identity.workspace_id)
    ]
    failed = [a for a in asks if a.status == "failed"]
    negotiations = await negotiations_of(db(request), None, workspace_id=identity.workspace_id)
    return page(request, "admin_asks.html", identity=identity, asks=asks, failed=failed, negotiations=negotiations)


async def ingestion(request: Request) -> Response:
    identity = await _admin(request)
    if isinstance(identity, Response):
        return identity
    workspace_id = identity.workspace_id
    channels = await channel_status(db(request), workspace_id=workspace_id)
    members = await member_status(db(request), workspace_id=workspace_id)
    problems = await object_problems(db(request), workspace_id=workspace_id)
    sources = await memory_sources(db(request), request.state.runtime.settings, workspace_id=workspace_id)
    return page(
        request, "admin_ingestion.html", identity=identity, channels=channels, members=members, problems=problems,
        sources=sources,
    )  # fmt: skip


async def bench(request: Request) -> Response:
    """The reports found under ASKWITH_BENCH_REPORTS_DIR, and one of them (`?report=`, default the newest) with its
    tables and plots."""
    identity = await _admin(request)
    if isinstance(identity, Response):
        return identity
    root = request.app.state.web.settings.resolved_bench_reports_dir
    reports = await asyncio.to_thread(find_reports, root)
    wanted = request.query_params.get("report")
    selected = next((r for r in reports if r.name == wanted), None) if wanted else next(iter(reports), None)
    if wanted and selected is None:
        return page(request, "error.html", identity=identity, status_code=404, title=texts.NOT_FOUND_TITLE,
                    message=texts.not_found(f"bench report {wanted!r}"))  # fmt: skip
    shown = await asyncio.to_thread(show_report, root, selected) if selected else None
    return page(request, "admin_bench.html", identity=identity, reports=reports, shown=shown, root=root,
                empty=texts.no_bench_reports(str(root)), scripted_note=SCRIPTED_NOTE)  # fmt: skip


async def bench_plot(request: Request) -> Response:
    """One PNG of a listed report (`?report=NAME&file=scores.png`); anything not in the listing is 404."""
    identity = await _admin(request)
    if isinstance(identity, Response):
        return identity
    root = request.app.state.web.settings.resolved_bench_reports_dir
    name, file = request.query_params.get("report", ""), request.query_params.get("file", "")
    path = await asyncio.to_thread(plot_file, root, name, file)
    if path is None:
        return page(request, "error.html", identity=identity, status_code=404, title=texts.NOT_FOUND_TITLE,
                    message=texts.not_found(f"plot {file!r} in bench report {name!r}"))  # fmt: skip
    return FileResponse(path, media_type="image/png")


routes = [
    Route("/admin", all_asks, methods=["GET"]),
    Route("/admin/ingestion", ingestion, methods=["GET"]),
    Route("/admin/bench", bench, methods=["GET"]),
    Route("/admin/bench/plot", bench_plot, methods=["GET"]),
]
