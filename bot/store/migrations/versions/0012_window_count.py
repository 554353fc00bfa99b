"""window count per memory session: a channel's window vectors can be read from the vector index by key

Revision ID: 0012_window_count
Revises: 0011_memory_version
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0012_window_count"
down_revision: str | None = "0011_memory_version"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL for sessions embedded before: their channels are read by a channel filter, as before.
    op.add_column("memory_session", sa.Column("window_count", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("memory_session", "window_count")  # SQLite 3.35+ drops a plain column in place
