"""The Slack Web API methods askwith calls, as Slack publishes them: token types allowed, scopes, arguments, documented
error codes and page caps. The fake Slack (`FakeSlackApi`) refuses what this table refuses, and the contract test
(`tests/integration/slack/test_slack_contract.py`) checks every call askwith makes against it.

    spec = METHODS["assistant.search.context"]
    spec.problems("bot", {"query": "launch", "channel_types": "im"})   # ["bot token may not search im ..."]

Scopes by token type for Real-time Search, in the words of Slack's "Using the Real-time Search API" guide (its
"Required Scopes" table, column "Token Type Allowed"): `search:read.public` "Read access to all public channel
messages" — Bot, User; `search:read.private` — User; `search:read.mpim` — User; `search:read.im` — User;
`search:read.files` — Bot, User; `search:read.users` — Bot, User. "To use the Real-time Search API to fetch private
conversation data or to use it outside the Slack client, a user token is required." "All API calls made using a bot
token require an `action_token`. API calls made using a user token do not require an `action_token`."

`assistant.search.context`, from its method page: required `query` ("User prompt or search query"); optional
`action_token`, `after`, `before`, `channel_types` ("any combination of `public_channel`, `private_channel`, `mpim`,
`im`", default `public_channel`), `content_types` (default `messages`), `context_channel_id`, `cursor`,
`disable_semantic_search`, `highlight`, `include_archived_channels`, `include_bots`, `include_context_messages`,
`include_deleted_users`, `include_message_blocks`, `limit` ("up to a max of 20. Defaults to 20."), `modifiers`,
`sort`, `sort_dir`, `term_clauses`. Errors: `assistant_search_context_disabled` ("We're having issues returning your
search results. Please wait and try again."), `context_channel_not_found`, `feature_not_enabled` ("The feature is not
available on the current workspace."), `invalid_action_token`, `invalid_cursor`, `missing_query`, `query_too_long`,
`rate_limited` ("Rate limited."), besides the common ones (`missing_scope`, `not_allowed_token_type`, `invalid_auth`,
`token_revoked`, ...). Rate limit: "special rate limiting conditions. For most teams, the limit is 10+ requests per
minute".

`conversations.history` / `conversations.replies`: since 2025-05-29 a commercially distributed app not approved for
the Marketplace "will be limited to 1 request per minute" with "a new rate limit of 15 messages per request" (new
installs; "Existing installations of apps that are not Marketplace-approved are not subject to the new posted
limits"); otherwise `limit` is at most 999.
"""

from __future__ import annotations

from dataclasses import dataclass, field


BOT, USER = "bot", "user"
COMMON_ERRORS = frozenset(
    "not_authed invalid_auth account_inactive token_revoked token_expired no_permission missing_scope "
    "not_allowed_token_type invalid_arguments ratelimited request_timeout fatal_error internal_error".split()
)
# The guide's "Token Type Allowed" column for the search scopes.
SEARCH_SCOPE_TOKENS = {
    "search:read.public": frozenset({BOT, USER}),
    "search:read.private": frozenset({USER}),
    "search:read.mpim": frozenset({USER}),
    "search:read.im": frozenset({USER}),
    "search:read.files": frozenset({BOT, USER}),
    "search:read.users": frozenset({BOT, USER}),
}
SEARCH_SCOPE_OF_TYPE = {
    "public_channel": "search:read.public",
    "private_channel": "search:read.private",
    "mpim": "search:read.mpim",
    "im": "search:read.im",
}
# Scopes that exist only for user tokens (a manifest listing one under `bot` is refused by Slack).
USER_ONLY_SCOPES = frozenset(s for s, tokens in SEARCH_SCOPE_TOKENS.items() if tokens == {USER}) | {"search:read"}
READ_SCOPES = ("channels:read", "groups:read", "im:read", "mpim:read")
HISTORY_SCOPES = ("channels:history", "groups:history", "im:history", "mpim:history")
HISTORY_PAGE_CAP = 999
POSTED_HISTORY_PAGE_CAP = 15
SEARCH_PAGE_CAP = 20


@dataclass(frozen=True)
class MethodSpec:
    tokens: frozenset[str]  # token types allowed
    scopes: tuple[str, ...] = ()  # one of these, by the conversation's type (empty: none needed)
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    errors: frozenset[str] = field(default_factory=frozenset)  # the method's own documented codes
    page_cap: int | None = None  # most items `limit` may ask for

    def problems(self, token_type: str, params: dict[str, object]) -> list[str]:
        """What Slack would refuse (or ignore) in a call with this token type and these arguments."""
        found = [] if token_type in self.tokens else [f"{token_type} token not allowed"]
        # slack_sdk sends a client's `team_id` with every call (org-wide apps); Slack accepts it on any method
        known = {"token", "team_id", *self.required, *self.optional}
        found += [f"undocumented argument {name}" for name in params if name not in known]
        found += [f"missing required argument {name}" for name in self.required if params.get(name) in (None, "")]
        limit = params.get("limit")
        if self.page_cap is not None and limit not in (None, "") and int(str(limit)) > self.page_cap:
            found.append(f"limit {limit} over the page cap {self.page_cap}")
        return found


def _spec(tokens: str, scopes: str = "", required: str = "", optional: str = "", **rest: object) -> MethodSpec:
    kinds = frozenset(tokens.split(","))
    return MethodSpec(kinds, tuple(scopes.split()), tuple(required.split()), tuple(optional.split()), **rest)  # type: ignore[arg-type]


_POST_ARGS = "text blocks attachments thread_ts reply_broadcast unfurl_links unfurl_media mrkdwn metadata icon_emoji "
_POST_ARGS += "icon_url username link_names parse as_user markdown_text"
_PAGED = "cursor limit"
METHODS: dict[str, MethodSpec] = {
    "auth.test": _spec("bot,user"),
    "auth.revoke": _spec("bot,user", optional="test"),
    "users.list": _spec("bot,user", "users:read", optional=f"{_PAGED} include_locale team_id"),
    "users.info": _spec("bot,user", "users:read", "user", "include_locale", errors=frozenset({"user_not_found"})),
    "conversations.list": _spec(
        "bot,user", " ".join(READ_SCOPES), optional=f"{_PAGED} exclude_archived team_id types", page_cap=1000
    ),
    "users.conversations": _spec(
        "bot,user", " ".join(READ_SCOPES), optional=f"{_PAGED} exclude_archived team_id types user", page_cap=1000
    ),
    "conversations.members": _spec(
        "bot,user", " ".join(READ_SCOPES), "channel", _PAGED, errors=frozenset({"channel_not_found"}), page_cap=1000
    ),
    "conversations.info": _spec(
        "bot,user",
        " ".join(READ_SCOPES),
        "channel",
        "include_locale include_num_members",
        errors=frozenset({"channel_not_found"}),
    ),  # fmt: skip
    "conversations.history": _spec(
        "bot,user",
        " ".join(HISTORY_SCOPES),
        "channel",
        f"{_PAGED} include_all_metadata inclusive latest oldest",
        errors=frozenset({"channel_not_found", "not_in_channel", "invalid_cursor"}),
        page_cap=HISTORY_PAGE_CAP,
    ),  # fmt: skip
    "conversations.replies": _spec(
        "bot,user",
        " ".join(HISTORY_SCOPES),
        "channel ts",
        f"{_PAGED} include_all_metadata inclusive latest oldest",
        errors=frozenset({"channel_not_found", "thread_not_found", "invalid_cursor"}),
        page_cap=HISTORY_PAGE_CAP,
    ),  # fmt: skip
    "conversations.open": _spec(
        "bot,user",
        "im:write mpim:write channels:manage groups:write",
        optional="channel prevent_creation return_im users",
    ),  # fmt: skip
    "conversations.create": _spec(
        "bot,user", "channels:manage groups:write", "name", "is_private team_id", errors=frozenset({"name_taken"})
    ),
    "chat.postMessage": _spec("bot,user", "chat:write", "channel", _POST_ARGS, errors=frozenset({"is_archived"})),
    "chat.postEphemeral": _spec("bot,user", "chat:write", "channel user", _POST_ARGS),
    "chat.update": _spec(
        "bot,user", "chat:write", "channel ts", f"{_POST_ARGS} file_ids", errors=frozenset({"message_not_found"})
    ),
    "chat.getPermalink": _spec("bot,user", required="channel message_ts"),
    "usergroups.users.list": _spec("bot,user", "usergroups:read", "usergroup", "include_disabled team_id"),
    "assistant.threads.setStatus": _spec(
        "bot", "assistant:write", "channel_id thread_ts status", "loading_messages icon_emoji icon_url username"
    ),
    "assistant.threads.setSuggestedPrompts": _spec("bot", "assistant:write", "channel_id thread_ts prompts", "title"),
    "views.open": _spec("bot,user", required="view", optional="trigger_id interactivity_pointer"),
    "views.publish": _spec("bot,user", required="user_id view", optional="hash"),
    "oauth.v2.access": _spec(
        "none,bot,user", optional="client_id client_secret code redirect_uri grant_type refresh_token"
    ),
    "assistant.search.context": _spec(
        "bot,user",
        " ".join(SEARCH_SCOPE_TOKENS),
        "query",
        "action_token after before channel_types content_types context_channel_id cursor disable_semantic_search "
        "highlight include_archived_channels include_bots include_context_messages include_deleted_users "
        "include_message_blocks limit modifiers sort sort_dir term_clauses",
        errors=frozenset(
            "assistant_search_context_disabled context_channel_not_found feature_not_enabled invalid_action_token "
            "invalid_cursor missing_query query_too_long rate_limited".split()
        ),
        page_cap=SEARCH_PAGE_CAP,
    ),  # fmt: skip
}


def search_problems(token_type: str, params: dict[str, object]) -> list[str]:
    """`assistant.search.context`'s own rules beyond its arguments: the channel types a token type may search, and
    the `action_token` a bot token needs."""
    types = [t for t in str(params.get("channel_types") or "public_channel").split(",") if t]
    found = [f"unknown channel type {t}" for t in types if t not in SEARCH_SCOPE_OF_TYPE]
    found += [
        f"{token_type} token may not search {t} ({SEARCH_SCOPE_OF_TYPE[t]} is a user-token scope)"
        for t in types
        if t in SEARCH_SCOPE_OF_TYPE and token_type not in SEARCH_SCOPE_TOKENS[SEARCH_SCOPE_OF_TYPE[t]]
    ]
    if token_type == BOT and not params.get("action_token"):
        found.append("a bot token's search needs the action_token of the asker's event")
    return found


def scope_problems(token_type: str, scopes: list[str] | tuple[str, ...]) -> list[str]:
    """Scopes an app asks for under a token type that Slack does not allow for that token type."""
    return [f"{s} is not a {token_type}-token scope" for s in scopes if token_type == BOT and s in USER_ONLY_SCOPES]
