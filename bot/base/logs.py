"""askwith's logging set-up: one root handler, libraries' routine chatter quieted, and nothing secret written.

    configure_logging(settings)      # once, at the start of a command

Every record leaves through the root handler, which carries a `RedactingFilter`, at every level (DEBUG included):

- the values of secret settings (tokens, signing and client secrets, link secret, API keys) become `***`;
- Slack tokens (`xoxb-`, `xoxp-`, `xapp-`, ...) become `xox?-***`, wherever they came from (an OAuth response);
- sign-in and OAuth parameters in URLs and forms (`t=` transcript-link tokens, `code=`, `state=`, `client_secret=`,
  `token=`) keep their name, not their value, however the key is percent-escaped (`?%74=` is `?t=`), and so do such
  fields in printed dicts (bolt prints an OAuth callback's parsed query, `{'code': ['...']}`);
- request and response bodies that Slack's and OpenAI's libraries print (bolt prints the whole body of a request it
  refuses), and SQL parameters the database drivers print, are cut from the line, which keeps what it says happened;
- no line is longer than MAX_MESSAGE_CHARS.

Third-party loggers (bolt, slack_sdk, discord.py, httpx, uvicorn and its access log) go through the same handler:
`configure_logging` removes handlers they set up themselves, and the filter goes on any handler left on any logger.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import unquote

from bot.settings import Settings, secret_setting_names


# Libraries that log their routine steps at INFO (Alembic's "Context impl SQLiteImpl", each HTTP request, each
# scheduled run): quiet at WARNING unless ASKWITH_LOG_LEVEL=DEBUG, so askwith's own lines are what the operator reads.
LIBRARY_LOGGERS = (
    "alembic", "httpx", "httpcore", "chromadb", "discord", "slack_bolt", "slack_sdk", "apscheduler", "aiohttp",
)  # fmt: skip
# Libraries whose records must reach the root handler (and its redaction) even if they set up handlers of their own
# (uvicorn's default logging config, discord.py's `setup_logging`).
ROUTED_LOGGERS = (*LIBRARY_LOGGERS, "uvicorn", "uvicorn.error", "uvicorn.access", "openai", "websockets")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_MESSAGE_CHARS = 4000
SHORTEST_SECRET = 6  # shorter values would blank out ordinary words

SLACK_TOKEN = re.compile(r"\bx(?:ox[a-z]|app)-[0-9A-Za-z-]+")
URL_PARAM = re.compile(r"(?i)((?:^|[?&\s;,(])(?:t|code|state|token|client_secret|access_token)=)[^&\s\"'<>#,)]+")
ENCODED_PARAM = re.compile(r"(?i)((?:%3F|%26)(?:t|code|state|token|client_secret)%3D)[^&\s\"'<>%]+")
# A secret field of a printed dict or JSON, its value alone or in a list (bolt prints a request's parsed query string:
# `{'code': ['...'], 'state': ['...']}`).
QUOTED_FIELD = re.compile(
    r"(?i)(['\"](?:t|code|state|token|client_secret|access_token|refresh_token|signing_secret)['\"]\s*:\s*"
    r"[\[(]?\s*b?['\"])[^'\"]+"
)
# A query-string key written with percent escapes (`?%74=` is `?t=` to the server): decoded before the rules above.
ENCODED_KEY = re.compile(r"(?<=[?&;])[^=&\s?#\"'<>]*%[0-9A-Fa-f]{2}[^=&\s?#\"'<>]*(?==)")
# (logger name prefix, what starts the part of the line that is a body) for libraries that print bodies.
BODY_STARTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("slack_bolt", re.compile(r"(?is)(?:\bbody\b|\(signature:|Unhandled request \(|for the request \().*")),
    ("slack_sdk", re.compile(r"(?is)(?:, (?:params|headers|body|data|json|files):|\s*Payload:).*")),
    ("openai", re.compile(r"(?is)(?<=Request options:).*")),
    # httpcore's DEBUG trace prints requests and responses with their headers (Authorization, cookies, Location).
    ("httpcore", re.compile(r"(?s)(?<=\s)(?:request|return_value|headers)=.*")),
    # SQL parameters: members' messages, questions and answers. The statement itself stays.
    ("aiosqlite", re.compile(r"(?s)', [(\[].*")),
    ("sqlalchemy.engine", re.compile(r"(?s)(?<=^\[)[^\]]*\] [(\[{].*")),
)


def configure_logging(settings: Settings) -> None:
    level = settings.log_level.upper()
    logging.basicConfig(level=level, format=FORMAT)
    if level != "DEBUG":
        for name in LIBRARY_LOGGERS:
            logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
    route_to_root(ROUTED_LOGGERS)
    install_redaction(secret_values(settings))


def route_to_root(names: Iterable[str]) -> None:
    """Records of these loggers leave through the root handler only: their own handlers are removed."""
    for name in names:
        library = logging.getLogger(name)
        for handler in list(library.handlers):
            library.removeHandler(handler)
        library.propagate = True


def secret_values(settings: Settings) -> list[str]:
    return [str(getattr(settings, name)) for name in secret_setting_names() if getattr(settings, name)]


def install_redaction(secrets: Iterable[str]) -> RedactingFilter:
    """Put one redacting filter on every handler of the root logger and of any logger that has handlers of its own
    (replacing an earlier one)."""
    redacting = RedactingFilter(secrets)
    loggers = [
        logging.getLogger(),
        *(lg for lg in logging.root.manager.loggerDict.values() if isinstance(lg, logging.Logger)),
    ]
    for handler in {h for lg in loggers for h in lg.handlers}:
        for old in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(old)
        handler.addFilter(redacting)
    return redacting


class RedactingFilter(logging.Filter):
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        # Longest first, so a secret that contains another is replaced whole.
        self.secrets = sorted({s for s in secrets if len(s) >= SHORTEST_SECRET}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed call: logging reports it itself when formatting
            return True
        clean = self.redact(message, record.name)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info), "")
        return True

    def redact(self, text: str, logger_name: str = "") -> str:
        for prefix, body in BODY_STARTS:
            if logger_name.startswith(prefix) and (found := body.search(text)):
                text = text[: found.start()].rstrip(" ,(:") + " (body omitted)"
        for secret in self.secrets:
            text = text.replace(secret, "***")
        text = ENCODED_KEY.sub(lambda m: _decoded(m[0]), text)
        text = SLACK_TOKEN.sub(lambda m: m[0][:4] + "-***", text)
        text = URL_PARAM.sub(r"\1***", text)
        text = ENCODED_PARAM.sub(r"\1***", text)
        text = QUOTED_FIELD.sub(r"\1***", text)
        if len(text) > MAX_MESSAGE_CHARS:
            text = f"{text[:MAX_MESSAGE_CHARS]}… ({len(text) - MAX_MESSAGE_CHARS} characters cut)"
        return text


def _decoded(key: str) -> str:
    """A percent-escaped query key as the server reads it (escapes of escapes too: `%2574` -> `%74` -> `t`)."""
    for _ in range(3):
        key = unquote(key)
    return key
