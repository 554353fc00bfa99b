"""`/healthz`: 200 while the database answers, 503 when it does not (for load balancers and orchestrators); the
platforms listed are the workspaces served now (one that uninstalled askwith is gone from the list)."""

from __future__ import annotations

import logging

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


log = logging.getLogger(__name__)


async def healthz(request: Request) -> JSONResponse:
    runtime = request.state.runtime
    try:
        async with runtime.db.session() as session:
            await session.execute(text("SELECT 1"))
    except (SQLAlchemyError, OSError) as exc:
        log.warning("health check: database unavailable: %s", exc)
        return JSONResponse({"status": "unavailable", "database": "down"}, status_code=503)
    body = {
        "status": "ok",
        "database": "ok",
        "llm": "configured" if runtime.llm is not None else "not configured",
        "platforms": [p.name for p in runtime.platforms if p.serving()] or ["local"],
    }
    return JSONResponse(body)


routes = [Route("/healthz", healthz, methods=["GET"])]
