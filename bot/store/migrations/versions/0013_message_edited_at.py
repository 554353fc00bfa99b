"""message edited_at: the time of the version memory holds, so the newest version wins whatever order events arrive in

Revision ID: 0013_message_edited_at
Revises: 0012_window_count
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0013_message_edited_at"
down_revision: str | None = "0012_window_count"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL = the version as posted (its time is the message's ts); any edit seen later is newer than it.
    op.add_column("message", sa.Column("edited_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("message", "edited_at")
