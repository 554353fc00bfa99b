"""slack: members' own tokens (encrypted) and the inbound delivery log

Revision ID: 0006_slack
Revises: 0005_asks
Create Date: 2026-11-21 15:02:11.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0006_slack"
down_revision: str | None = "0005_asks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "user_token",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("workspace_external_id", sa.String(length=128), nullable=False),
        sa.Column("member_platform_id", sa.String(length=128), nullable=False),
        sa.Column("token_encrypted", sa.Text(), nullable=False),
        sa.Column("scopes", sa.Text(), nullable=False),
        sa.Column("granted_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_token")),
        sa.UniqueConstraint(
            "platform", "workspace_external_id", "member_platform_id", name=op.f("uq_user_token_platform")
        ),
    )
    op.create_table(
        "inbound_delivery",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("key", sa.String(length=256), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbound_delivery")),
        sa.UniqueConstraint("platform", "key", name=op.f("uq_inbound_delivery_platform")),
    )
    with op.batch_alter_table("inbound_delivery", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_inbound_delivery_received_at"), ["received_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("inbound_delivery", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_inbound_delivery_received_at"))
    op.drop_table("inbound_delivery")
    op.drop_table("user_token")
