"""rate slots: when each platform method may next be called in a workspace, shared by every process on the database

Revision ID: 0016_rate_slots
Revises: 0015_shared_process_state
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0016_rate_slots"
down_revision: str | None = "0015_shared_process_state"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rate_slot",
        sa.Column("team", sa.String(length=300), nullable=False),
        sa.Column("method", sa.String(length=100), nullable=False),
        sa.Column("next_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("team", "method", name=op.f("pk_rate_slot")),
    )


def downgrade() -> None:
    op.drop_table("rate_slot")
