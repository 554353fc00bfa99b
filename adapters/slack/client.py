"""The one way askwith builds a Slack Web API client: base URL from settings, 429s retried after `Retry-After`."""

from __future__ import annotations

from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.settings import Settings


def web_client(settings: Settings, *, token: str | None = None) -> AsyncWebClient:
    """A client for the bot token (default) or for `token`.

    Slack answers 429 with a `Retry-After` header; the rate-limit handler sleeps that long and retries, up to
    `SLACK_API_MAX_RETRIES` times, so callers never see a transient rate limit.
    """
    return AsyncWebClient(
        token=token if token is not None else settings.require("slack_bot_token"),
        base_url=settings.slack_api_url,
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
            AsyncRateLimitErrorRetryHandler(max_retry_count=settings.slack_api_max_retries),
        ],
    )
