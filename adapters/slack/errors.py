"""Slack's refusals as askwith's error tree, so ingestion can tell one object's failure from a workspace's.

Slack answers HTTP 200 with `{"ok": false, "error": "<code>"}` (or 429 with a `Retry-After` header). The code decides
what happens to the object a call was about (see `memory_ingest.isolation`). `assistant.search.context` documents its
own codes ("rate_limited": "Rate limited." comes as an HTTP 200 body, beside the usual 429 "ratelimited"):

    platform_error("assistant.search.context", exc)   # e.g. PlatformRequestError for `query_too_long`
"""

from __future__ import annotations

from slack_sdk.errors import SlackApiError

from bot.errors import (
    ChatPlatformError,
    LiveSearchGrantError,
    LiveSearchUnavailableError,
    PlatformAccessError,
    PlatformObjectGoneError,
    PlatformRateLimitedError,
    PlatformRequestError,
    PlatformTokenRevokedError,
)


GONE = frozenset({"thread_not_found", "channel_not_found", "message_not_found", "user_not_found"})
REVOKED = frozenset({"invalid_auth", "token_revoked", "account_inactive", "token_expired", "not_authed"})
NO_ACCESS = frozenset({"not_in_channel", "missing_scope", "access_denied", "not_allowed_token_type"})
RATE_LIMITED = frozenset({"ratelimited", "rate_limited"})  # 429's code, and the search method's own (HTTP 200)
MALFORMED = frozenset({"missing_query", "query_too_long", "invalid_cursor", "invalid_arguments"})
# The search's own refusals: Slack does not offer it to this app or workspace now; the grant to search as a member.
SEARCH_UNAVAILABLE = frozenset({"feature_not_enabled", "assistant_search_context_disabled"})
SEARCH_GRANT = frozenset({"invalid_action_token"})


def platform_error(method: str, exc: SlackApiError, *, token_owner: str | None = None) -> ChatPlatformError:
    """The askwith error for a refused call; `token_owner` names the member whose own token made the call."""
    response = exc.response
    code = str(response.get("error", "unknown_error"))
    if response.status_code == 429 or code in RATE_LIMITED:
        return PlatformRateLimitedError(method, code, retry_after=retry_after(response.headers))
    if code in SEARCH_UNAVAILABLE:
        return LiveSearchUnavailableError(method, code)
    if code in SEARCH_GRANT:
        return LiveSearchGrantError(method, code)
    if code in MALFORMED:
        return PlatformRequestError(method, code)
    if code in GONE:
        return PlatformObjectGoneError(method, code)
    if code in REVOKED:
        return PlatformTokenRevokedError(method, code, token_owner=token_owner)
    if code in NO_ACCESS:
        return PlatformAccessError(method, code)
    return ChatPlatformError(method, code)


def retry_after(headers: dict[str, object]) -> float:
    """Seconds from a `Retry-After` header (slack_sdk lists header values), 1 when absent or unreadable."""
    for key, value in headers.items():
        if key.lower() == "retry-after":
            raw = value[0] if isinstance(value, list | tuple) and value else value
            try:
                return max(float(str(raw)), 0.0)
            except ValueError:
                return 1.0
    return 1.0
