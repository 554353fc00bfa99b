"""The answers in a member's DM with askwith, shown as answers: the question they answer, the answer, and its sources
as links (the plain post carries neither the question nor links).

    cards = await dm_answers(db, settings, port, items, viewer="alice")   # message id -> LiveAsk
"""

from __future__ import annotations

from bot.errors import AskNotAllowedError, AskNotFoundError
from bot.port import ChatPort
from bot.settings import Settings
from bot.store.db import Database
from bot.web.records.live_ask import LiveAsk, load_ask_row, load_live_ask
from bot.web.render import answered_ask
from bot.web.workspace_view import MessageItem


RECENT_ANSWERS = 20  # the feed is polled: only the newest answers are rendered as cards, older ones stay plain text


async def dm_answers(
    db: Database, settings: Settings, port: ChatPort, items: list[MessageItem], *, viewer: str, workspace_id: int
) -> dict[str, LiveAsk]:
    """The finished asks of `viewer` that askwith's messages among `items` answer, by message id."""
    cards: dict[str, LiveAsk] = {}
    answers = [(item, ask_id) for item in items if item.is_bot and (ask_id := answered_ask(item.message.text))]
    for item, ask_id in answers[-RECENT_ANSWERS:]:
        ask = await load_ask_row(db, ask_id)
        if ask is None or ask.workspace_id != workspace_id or ask.requester != viewer:
            continue
        try:
            live = await load_live_ask(db, settings, port, ask, viewer=viewer)
        except (AskNotAllowedError, AskNotFoundError):
            continue
        if live.answer is not None:
            cards[item.message.id] = live
    return cards
