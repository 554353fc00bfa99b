"""`/metrics`: Prometheus text format, read from the record (so every worker's asks count, not only this one's)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from bot.web.metrics import CONTENT_TYPE, collect, render


async def metrics(request: Request) -> PlainTextResponse:
    samples = await collect(request.state.runtime.db)
    return PlainTextResponse(render(samples), media_type=CONTENT_TYPE)


routes = [Route("/metrics", metrics, methods=["GET"])]
