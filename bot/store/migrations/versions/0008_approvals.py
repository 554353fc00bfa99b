"""approvals: a member's decision stored with the ask, so a waiting ask holds no worker and a click reaches any process

Revision ID: 0008_approvals
Revises: 0007_live_memory
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0008_approvals"
down_revision: str | None = "0007_live_memory"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "approval",
        sa.Column("id", sa.String(length=160), nullable=False),
        sa.Column("ask_id", sa.Integer(), nullable=True),
        sa.Column("member_id", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("deadline_at", TZ, nullable=False),
        sa.Column("decided_at", TZ, nullable=True),
        sa.ForeignKeyConstraint(["ask_id"], ["ask.id"], name=op.f("fk_approval_ask_id_ask"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_approval")),
    )
    op.create_index(op.f("ix_approval_ask_id"), "approval", ["ask_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_approval_ask_id"), table_name="approval")
    op.drop_table("approval")
