"""Which memory source a Slack workspace uses, and the live one's wiring (see `bot.memory.live`).

`mirror`: history is copied into askwith's stores (ingestion, live events) — for an internal app a company builds for
its own workspace. `live`: nothing is copied; each search runs as `assistant.search.context` on behalf of the
member — for an app distributed to other workspaces, as Slack's API terms require since 2025.
ASKWITH_SLACK_MEMORY=auto picks live with ASKWITH_SLACK_DISTRIBUTION=oauth, else mirror.
"""

from __future__ import annotations

import logging

from adapters.slack.live_search import SEARCH_USER_SCOPES, SlackLiveSearch
from adapters.slack.port import SlackPort
from bot.agents.memory_tools import MemoryAccess
from bot.memory.live import live_access, memory_source
from bot.settings import Settings
from bot.store.db import Database
from bot.store.user_tokens import UserTokenStore


logger = logging.getLogger(__name__)


def slack_memory_source(settings: Settings) -> str:
    """`live` or `mirror` for this process's Slack workspaces."""
    return memory_source(settings, "slack")


def member_scopes(settings: Settings) -> tuple[str, ...]:
    """User scopes `/askwith connect` asks for beyond reading DMs: the search scopes in live mode."""
    return SEARCH_USER_SCOPES if slack_memory_source(settings) == "live" else ()


async def live_memory(
    db: Database, port: SlackPort, tokens: UserTokenStore | None, *, reader_of: MemoryAccess
) -> tuple[MemoryAccess, SlackLiveSearch]:
    """The workspace's memory searched live on Slack, as its asks read it (the private reader model kept)."""
    me = await port.identity()

    async def notify(member_id: str, text: str) -> None:
        await port.post(await port.open_dm(member_id), text)

    search = SlackLiveSearch(
        port.client, db, tokens, team_id=me.team_id, notify=notify, skip_channels=port.is_bot_dm_channel
    )
    return live_access(db, search, reader=reader_of.reader), search
