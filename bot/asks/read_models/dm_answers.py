"""The answers in a member's DM with askwith, shown as answers: the question they answer, the answer, and its sources
as links (the plain post carries neither the question nor links).

    cards = await dm_answers(db, settings, port, [("m12", 7)], viewer="alice", workspace_id=1)  # message id -> LiveAsk
"""

from __future__ import annotations

from bot.asks.read_models.live_ask import LiveAsk, load_ask_row, load_live_ask
from bot.errors import AskNotAllowedError, AskNotFoundError
from bot.platform.port import ChatPort
from bot.settings import Settings
from bot.store.db import Database


RECENT_ANSWERS = 20  # the feed is polled: only the newest answers are rendered as cards, older ones stay plain text


async def dm_answers(
    db: Database,
    settings: Settings,
    port: ChatPort,
    answers: list[tuple[str, int]],
    *,
    viewer: str,
    workspace_id: int,
) -> dict[str, LiveAsk]:
    """The finished asks of `viewer` that askwith's posts answer, by message id. `answers`: (message id, ask id) of
    each post of askwith's that answers an ask, oldest first."""
    cards: dict[str, LiveAsk] = {}
    for message_id, ask_id in answers[-RECENT_ANSWERS:]:
        ask = await load_ask_row(db, ask_id)
        if ask is None or ask.workspace_id != workspace_id or ask.requester != viewer:
            continue
        try:
            live = await load_live_ask(db, settings, port, ask, viewer=viewer)
        except (AskNotAllowedError, AskNotFoundError):
            continue
        if live.answer is not None:
            cards[message_id] = live
    return cards
