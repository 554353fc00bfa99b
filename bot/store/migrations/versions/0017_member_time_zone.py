"""member time zone: the zone a member reads deadlines and times in, chosen by them or read from their platform profile

Revision ID: 0017_member_time_zone
Revises: 0016_rate_slots
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0017_member_time_zone"
down_revision: str | None = "0016_rate_slots"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL = not known: existing members read times in the workspace's zone until a mirror or the member sets one.
    op.add_column("member", sa.Column("time_zone", sa.String(length=64), nullable=True))
    op.add_column("member", sa.Column("platform_time_zone", sa.String(length=64), nullable=True))


def downgrade() -> None:
    op.drop_column("member", "platform_time_zone")
    op.drop_column("member", "time_zone")
