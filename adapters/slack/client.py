"""The one way askwith builds a Slack Web API client: base URL from settings, short 429s retried after `Retry-After`.

Slack answers 429 with a `Retry-After` header. A short wait (up to `MAX_INLINE_WAIT_SECONDS`) is slept inline and the
call retried, up to `SLACK_API_MAX_RETRIES` times; a longer one is not slept inside a listener or an ingestion run:
the call fails with `PlatformRateLimitedError` (see `adapters.slack.errors`), and ingestion backs that object off for
at least that long while the rest of the process carries on.
"""

from __future__ import annotations

from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.errors import retry_after
from bot.settings import Settings


MAX_INLINE_WAIT_SECONDS = 30.0


class ShortRateLimitRetryHandler(AsyncRateLimitErrorRetryHandler):
    """bolt's rate-limit retry, limited to waits short enough to sit through."""

    def __init__(self, max_retry_count: int, *, max_wait_seconds: float = MAX_INLINE_WAIT_SECONDS) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait_seconds = max_wait_seconds

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        return retry_after(dict(response.headers)) <= self.max_wait_seconds


def web_client(settings: Settings, *, token: str | None = None) -> AsyncWebClient:
    """A client for the bot token (default) or for `token`."""
    return AsyncWebClient(
        token=token if token is not None else settings.require("slack_bot_token"),
        base_url=settings.slack_api_url,
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
            ShortRateLimitRetryHandler(max_retry_count=settings.slack_api_max_retries),
        ],
    )
