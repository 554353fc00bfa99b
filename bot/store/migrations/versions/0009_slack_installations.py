"""slack installations: one row per workspace that installed askwith through Slack's OAuth flow

Revision ID: 0009_slack_installations
Revises: 0008_approvals
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0009_slack_installations"
down_revision: str | None = "0008_approvals"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "slack_installation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("enterprise_id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("team_name", sa.String(length=256), nullable=False),
        sa.Column("app_id", sa.String(length=32), nullable=False),
        sa.Column("bot_id", sa.String(length=32), nullable=False),
        sa.Column("bot_user_id", sa.String(length=32), nullable=False),
        sa.Column("bot_token_encrypted", sa.Text(), nullable=False),
        sa.Column("bot_scopes", sa.Text(), nullable=False),
        sa.Column("installer_user_id", sa.String(length=32), nullable=False),
        sa.Column("installed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_slack_installation")),
        sa.UniqueConstraint("enterprise_id", "team_id", name=op.f("uq_slack_installation_enterprise_id")),
    )


def downgrade() -> None:
    op.drop_table("slack_installation")
