"""The lease that makes one process the leader of a workspace's scheduled sync (see `bot.store.leases`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.models import Base


class SyncLease(Base):
    """Who runs a workspace's scheduled sync until `expires_at` (renewed at each run it makes)."""

    __tablename__ = "sync_lease"

    name: Mapped[str] = mapped_column(String(200), primary_key=True)  # e.g. "sync:slack:T123"
    holder: Mapped[str] = mapped_column(String(200))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
