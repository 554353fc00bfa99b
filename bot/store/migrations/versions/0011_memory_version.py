"""memory version per channel: bumped whenever the channel's memory vectors change, so a process that keeps
vectors in memory knows when to read them again

Revision ID: 0011_memory_version
Revises: 0010_ask_experience
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0011_memory_version"
down_revision: str | None = "0010_ask_experience"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("channel", sa.Column("memory_version", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("channel", "memory_version")  # SQLite 3.35+ drops a plain column in place
