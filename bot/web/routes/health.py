"""`/healthz`: 200 while the database answers, 503 when it does not or not within `DATABASE_CHECK_S` (for load
balancers and orchestrators); the platforms listed are the workspaces served now (one that uninstalled askwith is
gone from the list)."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


log = logging.getLogger(__name__)
# A probe answers within its own bound: an exhausted pool would otherwise hold it for the pool's 30 s timeout,
# longer than load balancers wait, so they would see a hang rather than a clear 503.
DATABASE_CHECK_S = 3.0


async def healthz(request: Request) -> JSONResponse:
    runtime = request.state.runtime
    try:
        await asyncio.wait_for(runtime.db.check(), timeout=DATABASE_CHECK_S)
    except TimeoutError:
        log.warning("health check: database did not answer within %.0f s", DATABASE_CHECK_S)
        return JSONResponse({"status": "unavailable", "database": "timeout"}, status_code=503)
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
