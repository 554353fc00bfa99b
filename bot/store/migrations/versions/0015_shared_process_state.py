"""shared process state: web sign-ins and platform action tokens, so every process on the database sees them

Revision ID: 0015_shared_process_state
Revises: 0014_sync_lease
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0015_shared_process_state"
down_revision: str | None = "0014_sync_lease"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web_session",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("member", sa.String(length=256), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspace.id"], name=op.f("fk_web_session_workspace_id_workspace"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_web_session")),
    )
    op.create_index(op.f("ix_web_session_workspace_id"), "web_session", ["workspace_id"])
    op.create_index(op.f("ix_web_session_expires_at"), "web_session", ["expires_at"])
    op.create_table(
        "action_token",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("member_platform_id", sa.String(length=128), nullable=False),
        sa.Column("token_encrypted", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspace.id"], name=op.f("fk_action_token_workspace_id_workspace"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_action_token")),
        sa.UniqueConstraint("workspace_id", "member_platform_id", name=op.f("uq_action_token_workspace_id")),
    )
    op.create_index(op.f("ix_action_token_expires_at"), "action_token", ["expires_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_action_token_expires_at"), table_name="action_token")
    op.drop_table("action_token")
    op.drop_index(op.f("ix_web_session_expires_at"), table_name="web_session")
    op.drop_index(op.f("ix_web_session_workspace_id"), table_name="web_session")
    op.drop_table("web_session")
