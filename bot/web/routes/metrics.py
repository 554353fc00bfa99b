"""`/metrics`: Prometheus text format, read from the record (so every worker's asks count, not only this one's).

Operator data: a scraper sends `Authorization: Bearer <ASKWITH_METRICS_TOKEN>`; a signed-in admin may also look.
Anyone else gets 401.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from bot.web import texts
from bot.web.auth import config, current_identity
from bot.web.metrics import CONTENT_TYPE, collect, render


async def metrics(request: Request) -> PlainTextResponse:
    if not await _allowed(request):
        return PlainTextResponse(texts.METRICS_REFUSED, status_code=401, headers={"WWW-Authenticate": "Bearer"})
    samples = await collect(request.state.runtime.db)
    return PlainTextResponse(render(samples), media_type=CONTENT_TYPE)


async def _allowed(request: Request) -> bool:
    token = config(request).settings.metrics_token
    sent = request.headers.get("authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    identity = await current_identity(request)
    return identity is not None and identity.is_admin


routes = [Route("/metrics", metrics, methods=["GET"])]
