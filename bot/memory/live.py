"""Live memory: a member's memory searched where it lives, query by query, instead of a copy askwith keeps.

A workspace's memory source is `mirror` (history copied into the clear and fuzzy stores, searched there) or `live`
(each search runs on the platform, on behalf of the member, and its results live only in the ask that asked). The
agents' memory tools call the same `ClearSearch` / `FuzzySearch` protocols either way: `LiveClearMemory` and
`LiveFuzzyMemory` implement them over a platform's `LiveSearch` (Slack: `assistant.search.context`, in
`adapters.slack.live_search`), so agents, the outbox and the consensus never know which source served them.

    search = SlackLiveSearch(...)                       # a platform's LiveSearch
    access = live_access(db, search, reader=None)      # MemoryAccess with live clear and fuzzy memory, no history
    hits = await access.clear.search(viewer, ClearQuery(("launch",)))

What is filtered here, whatever the platform returns: channels the member excluded from their agent's memory.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

from bot.errors import InvalidSettingError
from bot.llm.client import LLMClient
from bot.memory.access import MemoryAccess, Visible
from bot.memory.source import LiveQuery, LiveResult, LiveSearch
from bot.memory.types import ClearHit, ClearQuery, FuzzyHit, FuzzyQuery, MessageView, Viewer
from bot.settings import Settings
from bot.store.db import Database
from bot.store.member_settings import member_and_excluded_channels


class _LiveMemory:
    def __init__(self, db: Database, search: LiveSearch) -> None:
        self.db = db
        self.live = search

    async def _results(self, viewer: Viewer, query: LiveQuery) -> list[LiveResult]:
        member, excluded = await member_and_excluded_channels(self.db, viewer.member_id)
        found = await self.live.search(member, query)
        return [r for r in found if r.message.channel_id not in excluded]


class LiveClearMemory(_LiveMemory):
    """Clear memory over a live search: the keywords searched lexically (the platform's semantic mode off)."""

    async def search(self, viewer: Viewer, query: ClearQuery, *, visible: Visible | None = None) -> list[ClearHit]:
        text = " ".join(query.keywords)
        live = LiveQuery(text, False, query.limit, query.since, query.until, query.context_window)
        results = [r for r in await self._results(viewer, live) if _matches(r.message, query)]
        count = len(results)
        return [ClearHit(r.message, float(count - rank), r.context) for rank, r in enumerate(results)]


class LiveFuzzyMemory(_LiveMemory):
    """Fuzzy memory over a live search: the question searched semantically, its results grouped by channel (a
    channel's results stand in for a session; their "summary" says where they came from)."""

    async def search(self, viewer: Viewer, query: FuzzyQuery, *, visible: Visible | None = None) -> list[FuzzyHit]:
        results = await self._results(viewer, LiveQuery(query.text, True, max(query.top_k * 3, 5)))
        by_channel: dict[str, list[MessageView]] = defaultdict(list)
        for result in results:
            by_channel[result.message.channel_id].append(result.message)
        hits = [_channel_hit(messages, rank) for rank, messages in enumerate(by_channel.values())]
        return hits[: query.top_k]


def _channel_hit(messages: list[MessageView], rank: int) -> FuzzyHit:
    first = messages[0]
    ordered = sorted(messages, key=lambda m: m.ts)
    return FuzzyHit(
        session_key=f"live:{first.channel_id}:{first.id}", channel_id=first.channel_id,
        channel_name=first.channel_name, summary=f"search results in #{first.channel_name}", summary_method="live",
        score=1.0 / (1 + rank), first_ts=ordered[0].ts, last_ts=ordered[-1].ts, messages=tuple(ordered),
        matches=tuple(messages),
    )  # fmt: skip


def _matches(message: MessageView, query: ClearQuery) -> bool:
    """The sender and channel filters a live search cannot take as parameters, applied to its results."""
    if query.sender and query.sender.lower() not in (message.sender.lower(), message.id.lower()):
        return False
    return not query.channel or query.channel.lower() in (message.channel_name.lower(), message.channel_id.lower())


def live_access(db: Database, search: LiveSearch, *, reader: LLMClient | None = None) -> MemoryAccess:
    """The memory an ask of a live workspace reads through: live clear and fuzzy search, no whole-history reads
    (there is no copy to read whole)."""
    return MemoryAccess(
        clear=LiveClearMemory(db, search), fuzzy=LiveFuzzyMemory(db, search), reader=reader, live=search
    )


def source_of(memory: MemoryAccess) -> str:
    """`live` or `mirror`: what the start-up log, `askwith status` and the admin page say."""
    return "live" if memory.live is not None else "mirror"


SLACK_MEMORY_CHOICES = ("auto", "mirror", "live")
# Slack's Real-time Search guide: "Only directory-published apps or internal apps may use the Real-time Search API."
LIVE_ALLOWED = ("internal", "marketplace")
# Slack's rate-limit page: "Effective May 29, 2025, all newly-created Slack apps that are commercially distributed and
# have not been approved for the Slack Marketplace will be subject to new rate limits for the conversations.history
# and conversations.replies API methods. Existing installations of apps that are not Marketplace-approved are not
# subject to the new posted limits."
POSTED_LIMITS_FROM = datetime(2025, 5, 29, tzinfo=UTC)


def slack_app_kind(settings: Settings) -> tuple[str, str]:
    """(internal | marketplace | distributed, why): ASKWITH_SLACK_APP when set, else what the other settings say."""
    if settings.slack_app:
        return settings.slack_app, "ASKWITH_SLACK_APP"
    if settings.slack_marketplace:
        return "marketplace", "ASKWITH_SLACK_MARKETPLACE=true"
    if settings.slack_distribution == "oauth":
        return "distributed", "ASKWITH_SLACK_DISTRIBUTION=oauth without ASKWITH_SLACK_APP or ASKWITH_SLACK_MARKETPLACE"
    return "internal", "ASKWITH_SLACK_DISTRIBUTION=single (one workspace, the app's own bot token)"


def memory_source(settings: Settings, platform: str) -> str:
    """`live` or `mirror` for a platform's workspaces: only Slack has a live source (ASKWITH_SLACK_MEMORY; `auto` is
    live for a Marketplace app, mirror for the others); Discord and local workspaces are mirrored. Live memory for an
    app Slack does not let use the Real-time Search API (a distributed one outside the Marketplace) is refused."""
    chosen = settings.slack_memory.strip().lower()
    if chosen not in SLACK_MEMORY_CHOICES:
        raise InvalidSettingError("ASKWITH_SLACK_MEMORY", settings.slack_memory, "choice (auto|mirror|live)")
    if platform != "slack":
        return "mirror"
    kind, _ = slack_app_kind(settings)
    if chosen == "live" and kind not in LIVE_ALLOWED:
        expected = "mirror or auto: Slack lets only Marketplace-published or internal apps use its Real-time Search"
        raise InvalidSettingError("ASKWITH_SLACK_MEMORY", settings.slack_memory, expected)
    if chosen == "auto":
        return "live" if kind == "marketplace" else "mirror"
    return chosen


def slack_memory_option(settings: Settings, installed_at: datetime | None) -> tuple[str, str]:
    """(live | mirror | none, the plain sentence start-up logs) for one Slack install: what memory Slack allows it.

    A distributed app outside the Marketplace may not search live; its mirror reads history at the usual rates only
    for an install made before 2025-05-29, and a later install reads 1 request a minute, 15 messages a page: no
    memory worth the name ("none"; askwith still answers from what members tell it).
    """
    kind, why = slack_app_kind(settings)
    source = memory_source(settings, "slack")
    if kind != "distributed":
        return source, f"{kind} Slack app ({why}): {source} memory"
    before = installed_at is not None and _aware(installed_at) < POSTED_LIMITS_FROM
    if before:
        return "mirror", (
            f"distributed Slack app outside the Marketplace ({why}), installed before 2025-05-29: mirror memory at "
            "the usual rate limits; Slack lets it use no Real-time Search"
        )
    return "none", (
        f"distributed Slack app outside the Marketplace ({why}), installed on or after 2025-05-29: no memory option. "
        "Slack lets it use no Real-time Search, and conversations.history/replies come at 1 request a minute, 15 "
        "messages a page. Publish the app in the Marketplace (ASKWITH_SLACK_APP=marketplace) or run it as an "
        "internal app (ASKWITH_SLACK_APP=internal)"
    )


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
