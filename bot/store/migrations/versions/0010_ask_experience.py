"""ask experience: progress stage, cancel request, follow-ups and thread context on the ask; feedback votes

Revision ID: 0010_ask_experience
Revises: 0009_slack_installations
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0010_ask_experience"
down_revision: str | None = "0009_slack_installations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    # Plain ADD COLUMNs (no table rebuild on SQLite). `follow_up_of` is an ask id without a foreign key: deleting
    # an older ask must never touch the asks that followed it up.
    for column in (
        sa.Column("stage", sa.String(length=16), nullable=True),
        sa.Column("stage_detail", sa.String(length=256), nullable=True),
        sa.Column("stage_at", TZ, nullable=True),
        sa.Column("cancel_requested_at", TZ, nullable=True),
        sa.Column("cancelled_by", sa.String(length=256), nullable=True),
        sa.Column("follow_up_of", sa.Integer(), nullable=True),
        sa.Column("context", sa.Text(), nullable=True),
    ):
        op.add_column("ask", column)
    op.create_index("ix_ask_origin_thread", "ask", ["workspace_id", "origin_channel_id", "origin_thread_id"])

    op.create_table(
        "ask_feedback",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("ask_id", sa.Integer(), nullable=False),
        sa.Column("member", sa.String(length=256), nullable=False),
        sa.Column("vote", sa.Integer(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(["ask_id"], ["ask.id"], name=op.f("fk_ask_feedback_ask_id_ask"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ask_feedback")),
        sa.UniqueConstraint("ask_id", "member", name=op.f("uq_ask_feedback_ask_id")),
    )
    op.create_index(op.f("ix_ask_feedback_ask_id"), "ask_feedback", ["ask_id"])


def downgrade() -> None:
    op.drop_table("ask_feedback")
    op.drop_index("ix_ask_origin_thread", table_name="ask")
    with op.batch_alter_table("ask") as batch:
        for column in ("context", "follow_up_of", "cancelled_by", "cancel_requested_at", "stage_at"):
            batch.drop_column(column)
        batch.drop_column("stage_detail")
        batch.drop_column("stage")
