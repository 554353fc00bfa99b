"""sync lease: one process (the leader) runs a workspace's scheduled sync

Revision ID: 0014_sync_lease
Revises: 0013_message_edited_at
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0014_sync_lease"
down_revision: str | None = "0013_message_edited_at"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sync_lease",
        sa.Column("name", sa.String(length=200), primary_key=True),
        sa.Column("holder", sa.String(length=200), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sync_lease")
