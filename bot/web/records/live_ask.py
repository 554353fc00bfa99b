"""An ask as its live page shows it: where it stands now, and (once finished) its answer as the viewer may see it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.asks import models
from bot.store.db import Database
from bot.web import texts


FINISHED = frozenset(
    {models.AskStatus.DONE, models.AskStatus.UNSUPPORTED, models.AskStatus.FAILED, models.AskStatus.INTERRUPTED}
)


@dataclass(frozen=True)
class LiveAsk:
    id: int
    workspace_id: int
    requester: str
    colleagues: list[str]
    question: str
    status: str
    stage: str
    progress_text: str
    created_at: datetime
    final_text: str | None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


async def load_live_ask(db: Database, ask_id: int, *, viewer: str) -> LiveAsk | None:
    async with db.session() as session:
        ask = await session.get(models.Ask, ask_id)
    if ask is None:
        return None
    return LiveAsk(
        id=ask.id, workspace_id=ask.workspace_id, requester=ask.requester, colleagues=list(ask.colleagues),
        question=ask.question, status=ask.status, stage=ask.status, progress_text=texts.ask_status(ask.status),
        created_at=ask.created_at, final_text=ask.final_text,
    )  # fmt: skip
