"""One exception tree for askwith. Messages are written for the person who will read them."""

from __future__ import annotations

from typing import Any


class AskwithError(Exception):
    """Root of every error askwith raises on purpose."""

    def dict(self) -> dict[str, Any]:
        return {"type": type(self).__name__, "message": str(self)}


# ---------------------------------------------------------------------- settings
class SettingsError(AskwithError):
    pass


class MissingSettingError(SettingsError):
    def __init__(self, env: str, doc: str) -> None:
        super().__init__(f"{env} is not set: {doc}")
        self.env = env


class InvalidSettingError(SettingsError):
    def __init__(self, env: str, raw: str, expected: str) -> None:
        super().__init__(f"{env}={raw!r} is not a valid {expected}")
        self.env = env


class InvalidSecretSettingError(SettingsError):
    """A secret setting has the wrong shape; its value is never repeated in the message."""

    def __init__(self, env: str, expected: str) -> None:
        super().__init__(f"{env} is not a valid {expected}")
        self.env = env


class StoredTokenError(AskwithError):
    """A stored member token cannot be decrypted (the encryption key changed): the member must grant it again."""


# ---------------------------------------------------------------------- workspace / input
class WorkspaceError(AskwithError):
    """A problem with the chat world: unknown member, unknown channel, bad workspace file."""


class UnknownMemberError(WorkspaceError):
    def __init__(self, name: str) -> None:
        super().__init__(f"There is no member called {name!r} in this workspace.")
        self.name = name


class UnknownChannelError(WorkspaceError):
    def __init__(self, channel_id: str) -> None:
        super().__init__(f"There is no channel {channel_id!r} in this workspace.")
        self.channel_id = channel_id


class UnknownTimeZoneError(WorkspaceError):
    """A time zone a member typed that the zone database does not know; `close` holds the nearest names."""

    def __init__(self, zone: str, close: list[str]) -> None:
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        super().__init__(f"{zone!r} is not a time zone I know (write it like Europe/Paris or America/New_York).{hint}")
        self.zone = zone
        self.close = close


class UnknownWorkspaceError(WorkspaceError):
    def __init__(self, spec: str, known: list[str]) -> None:
        hint = f" Known: {', '.join(known)}, or a path to a workspace JSON file." if known else ""
        super().__init__(f"There is no workspace {spec!r}.{hint}")
        self.spec = spec


class WorkspaceNotIngestedError(WorkspaceError):
    def __init__(self, spec: str) -> None:
        super().__init__(f"Workspace {spec!r} has no memory yet: run `askwith ingest --workspace {spec}` first.")
        self.spec = spec


class LiveMemoryWorkspaceError(WorkspaceError):
    """A workspace whose memory is searched live on the platform: askwith keeps no copy of it to ingest."""

    def __init__(self, spec: str) -> None:
        super().__init__(
            f"Workspace {spec!r} is searched live on Slack (ASKWITH_SLACK_MEMORY): askwith keeps no copy of its "
            "history, so there is nothing to ingest."
        )
        self.spec = spec


class ChatPlatformError(WorkspaceError):
    """The chat platform's API refused a call (missing scope, not in channel, ...); the text names call and reason."""

    def __init__(self, call: str, reason: str) -> None:
        super().__init__(f"The chat platform refused {call}: {reason}")
        self.call = call
        self.reason = reason


class PlatformObjectGoneError(ChatPlatformError):
    """The object a call named no longer exists (a deleted thread, channel or message): ingestion retires it."""


class PlatformTokenRevokedError(ChatPlatformError):
    """The token a call used was revoked or is invalid: ingestion disables that token and tells its member
    (`token_owner`, the member's platform id; None when it is the bot's own token)."""

    def __init__(self, call: str, reason: str, *, token_owner: str | None = None) -> None:
        super().__init__(call, reason)
        self.token_owner = token_owner


class PlatformAccessError(ChatPlatformError):
    """The token may not read the object (not in the channel, a missing scope): that object waits and is retried."""


class PlatformRateLimitedError(ChatPlatformError):
    """The platform asked to wait `retry_after` seconds before calling again (longer than askwith waits inline)."""

    def __init__(self, call: str, reason: str, *, retry_after: float) -> None:
        super().__init__(call, f"{reason} (retry after {retry_after:g}s)")
        self.retry_after = retry_after


class PlatformRequestError(ChatPlatformError):
    """The platform refused a call as malformed (Slack: `missing_query`, `query_too_long`, `invalid_cursor`): retrying
    it unchanged cannot succeed; the caller shortens, restarts or drops it."""


class LiveSearchUnavailableError(ChatPlatformError):
    """The platform does not let this app search live now (Slack: `feature_not_enabled`, or
    `assistant_search_context_disabled`): live memory is marked unavailable and the member is told plainly."""


class LiveSearchGrantError(ChatPlatformError):
    """The short-lived grant to search as a member was refused (Slack: `invalid_action_token`): the ask's searches on
    that grant end, and the member is told plainly how to ask again."""


class PlatformInstallError(AskwithError):
    """A member's authorisation of askwith on a chat platform (OAuth install flow) failed; the text says why."""


class PlatformStartError(AskwithError):
    """A chat platform could not be connected when the process started (unreachable API, token refused, ...)."""

    def __init__(self, platform: str, cause: BaseException) -> None:
        reason = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        super().__init__(f"{platform.title()} did not start: {reason}")
        self.platform = platform


class NoPlatformError(AskwithError):
    """`askwith worker` runs asks for Slack or Discord; with neither configured there is nothing for it to run."""

    def __init__(self) -> None:
        super().__init__(
            "askwith worker runs Slack and Discord asks: set SLACK_BOT_TOKEN or DISCORD_BOT_TOKEN "
            "(the local web workspace runs its asks inside askwith serve)."
        )


# ---------------------------------------------------------------------- LLM
class LLMError(AskwithError):
    """The language model could not give a usable answer.

    `call` is the `LLMCallRecord` of the failed call (attempts, tokens, latency) when the client raised it.
    """

    call: Any = None


class LLMNotConfiguredError(LLMError):
    def __init__(self) -> None:
        super().__init__(
            "No language model is configured: set ASKWITH_LLM_BASE_URL (and ASKWITH_LLM_MODEL, ASKWITH_LLM_API_KEY) "
            "to any OpenAI-compatible endpoint, or ASKWITH_LOCAL_LLM=smollm2 to run a local model. To just try "
            "askwith offline, restart with --scripted (`askwith serve --scripted`): a stand-in plays the model."
        )


class LLMUnavailableError(LLMError):
    """The endpoint kept failing (rate limits, server errors, time-outs) after every retry."""


class LLMOutputError(LLMError):
    """The model answered, but not in the shape asked for, even after a repair attempt.

    `reply` is the unusable answer itself, when known (kept with the turn's error in the transcript)."""

    reply: str | None = None


class LLMRejectedError(LLMError):
    """The endpoint refused the request for good (bad key, unknown model, bad request): retrying cannot help."""


class LLMConfigurationError(LLMRejectedError):
    """The endpoint refuses how askwith is set up to call it (HTTP 400/401/403/404, out of quota): the key, model
    name, URL or account is wrong. No other turn can succeed, so the ask ends at once.

    `reason` is short and safe to show a member ("HTTP 401: the API key was not accepted; check ..."): it names
    settings, never the endpoint's address or the key."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class LLMTransientError(LLMError):
    """One attempt failed in a way worth retrying (429, 5xx, time-out, connection). The client retries these.

    `reason` is short and readable ("HTTP 503", "time-out after 60 s"); `retry_after` is the server's Retry-After
    in seconds when it sent one.
    """

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class LLMFormatRejectedError(LLMError):
    """The endpoint refused the request's `response_format`; the client falls back to a simpler JSON form."""


# ---------------------------------------------------------------------- asks
class AskError(AskwithError):
    """A problem with an ask (`/ask-with`): its request, its record or the worker running it."""


class AskRejectedError(AskError):
    """The request cannot be run as written (empty question, unknown colleague, ...); the text says why."""


class AskNotFoundError(AskError):
    def __init__(self, ask_id: int) -> None:
        super().__init__(f"There is no ask #{ask_id}.")
        self.ask_id = ask_id


class ClaimLostError(AskError):
    """Another worker took the ask over (this one was silent too long); this worker must stop touching it."""


class AskNotAllowedError(AskError):
    """The member may not do this to the ask (cancel someone else's, open another's answer); the text says why."""


class AskCancelledError(AskError):
    """The ask was cancelled while this worker ran it: stop, and end it as cancelled."""


class LocalLLMError(LLMError):
    """The local model could not be found, or its llama.cpp server would not start or answer."""


# ---------------------------------------------------------------------- benchmark
class BenchError(AskwithError):
    """A problem generating, reading or scoring an InformativeBench dataset."""


class BenchDataError(BenchError):
    """Benchmark input or output data is missing or malformed."""


class BenchGenerationError(BenchError):
    """A generator could not build a dataset that passes its own checks."""


# ---------------------------------------------------------------------- negotiation
class NegotiationError(AskwithError):
    """A negotiation cannot start or continue: bad scenario, missing profile, too many tasks."""


class ScenarioError(NegotiationError):
    """A negotiation scenario (file, generator input or member profiles) is inconsistent."""


class ProfileError(NegotiationError):
    """A member's negotiation profile is missing or malformed."""


class NegotiationRejectedError(NegotiationError):
    """A member's `/negotiate` request cannot start (unknown member, the bot, yourself, no profile)."""


# ---------------------------------------------------------------------- memory
class UnscopedTableError(AskwithError):
    """A table askwith cannot tie to a workspace, so it could not delete that workspace's rows in it (a bug)."""

    def __init__(self, table: str) -> None:
        super().__init__(f"table {table} is not tied to a workspace; say how to forget it in bot.asks.forget")


class MemoryQueryError(AskwithError):
    """A memory search that cannot run as asked (no keywords, a limit out of range). Worded for the agent's model."""


class MemoryUnavailableError(AskwithError):
    """A memory store on another machine cannot be reached (the Chroma server is down or refuses): the searches that
    need it fail until it answers again. The message is for the agent's model and the transcript; `detail` (the
    server's address and the network error) is for the log only."""

    MESSAGE = "meaning search is unavailable right now: askwith cannot reach its vector store"

    def __init__(self, detail: str = "") -> None:
        super().__init__(self.MESSAGE)
        self.detail = detail


# ---------------------------------------------------------------------- web
class WebError(AskwithError):
    """A problem serving the web app (transcripts, local workspace)."""


class LinkInvalidError(WebError):
    def __init__(self) -> None:
        super().__init__("This link is not valid. Open the newest link askwith sent you.")


class LinkExpiredError(WebError):
    def __init__(self) -> None:
        super().__init__("This link has expired. Ask again or open the newest link askwith sent you.")
