"""live memory: message tombstones, per-object ingestion status, thread state for incremental polling

Revision ID: 0007_live_memory
Revises: 0006_slack
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0007_live_memory"
down_revision: str | None = "0006_slack"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def _workspace_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["workspace_id"], ["workspace.id"], name=op.f(f"fk_{table}_workspace_id_workspace"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "message_tombstone",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("platform_id", sa.String(length=128), nullable=False),
        sa.Column("deleted_at", TZ, nullable=False),
        _workspace_fk("message_tombstone"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_message_tombstone")),
        sa.UniqueConstraint("workspace_id", "platform_id", name=op.f("uq_message_tombstone_workspace_id")),
    )
    op.create_table(
        "ingest_object",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("object_id", sa.String(length=256), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("retry_at", TZ, nullable=True),
        sa.Column("updated_at", TZ, nullable=False),
        _workspace_fk("ingest_object"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ingest_object")),
        sa.UniqueConstraint("workspace_id", "kind", "object_id", name=op.f("uq_ingest_object_workspace_id")),
    )
    with op.batch_alter_table("ingest_cursor", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reply_count", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("latest_reply", sa.String(length=64), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("ingest_cursor", schema=None) as batch_op:
        batch_op.drop_column("latest_reply")
        batch_op.drop_column("reply_count")
    op.drop_table("ingest_object")
    op.drop_table("message_tombstone")
