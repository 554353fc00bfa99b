"""Which memory source a Slack workspace uses, what each asks Slack for, and the live one's wiring (see
`bot.memory.live`).

`mirror`: history is copied into askwith's stores (ingestion, live events) — for an internal app a company builds for
its own workspace (manifest.yml). `live`: nothing is copied; each search runs as `assistant.search.context` on behalf
of the member — for a Slack Marketplace app (manifest.marketplace.yml): "Only directory-published apps or internal
apps may use the Real-time Search API". ASKWITH_SLACK_APP names the kind; ASKWITH_SLACK_MEMORY=auto picks live for a
Marketplace app only.

    member_scopes(settings)      # what `/askwith connect` asks a member for
    bot_events(settings)         # the events the app subscribes to in that mode
"""

from __future__ import annotations

import logging

from adapters.slack.install import USER_SCOPES
from adapters.slack.live_search import SEARCH_USER_SCOPES, SlackLiveSearch
from adapters.slack.port import SlackPort
from bot.memory.access import MemoryAccess
from bot.memory.live import live_access, memory_source
from bot.settings import Settings
from bot.store.db import Database
from bot.store.user_tokens import UserTokenStore


logger = logging.getLogger(__name__)


def slack_memory_source(settings: Settings) -> str:
    """`live` or `mirror` for this process's Slack workspaces."""
    return memory_source(settings, "slack")


# Channel message feeds: what the mirror copies. Live memory copies nothing, so it does not subscribe to them (a
# member's DM to askwith, message.im, is an ask in both modes).
MIRROR_MESSAGE_EVENTS = ("message.channels", "message.groups", "message.mpim")
MESSAGE_EVENTS = ("message.channels", "message.groups", "message.im", "message.mpim")


def member_scopes(settings: Settings) -> tuple[str, ...]:
    """User scopes `/askwith connect` asks for: reading the member's DMs (mirror), or searching as them (live; the
    Real-time Search guide's user-token scopes, and no `*:history`)."""
    return SEARCH_USER_SCOPES if slack_memory_source(settings) == "live" else USER_SCOPES


def bot_events(settings: Settings, listened: tuple[str, ...]) -> tuple[str, ...]:
    """The manifest's `bot_events` for this mode, from the event types the listeners handle (`message` expands to its
    channel-type events)."""
    live = slack_memory_source(settings) == "live"
    feeds = tuple(e for e in MESSAGE_EVENTS if not (live and e in MIRROR_MESSAGE_EVENTS))
    return tuple(e for name in listened for e in (feeds if name == "message" else (name,)))


async def live_memory(
    db: Database, port: SlackPort, tokens: UserTokenStore | None, *, reader_of: MemoryAccess
) -> tuple[MemoryAccess, SlackLiveSearch]:
    """The workspace's memory searched live on Slack, as its asks read it (the private reader model kept)."""
    me = await port.identity()

    async def notify(member_id: str, text: str) -> None:
        await port.post(await port.open_dm(member_id), text)

    search = SlackLiveSearch(
        port.client,
        db,
        tokens,
        team_id=me.team_id,
        notify=notify,
        skip_channels=port.is_not_memory,
        permalinks=port.permalinks,
    )
    return live_access(db, search, reader=reader_of.reader), search
