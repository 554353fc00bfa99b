"""foundation: workspace, members, channels, messages, memory sessions

Revision ID: 0001_foundation
Revises:
Create Date: 2026-11-21 12:17:53.423035
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0001_foundation"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_summary",
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("content_hash", name=op.f("pk_session_summary")),
    )
    op.create_table(
        "workspace",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("external_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workspace")),
        sa.UniqueConstraint("platform", "external_id", name=op.f("uq_workspace_platform")),
    )
    op.create_table(
        "channel",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("platform_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspace.id"], name=op.f("fk_channel_workspace_id_workspace"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_channel")),
        sa.UniqueConstraint("workspace_id", "platform_id", name=op.f("uq_channel_workspace_id")),
    )
    with op.batch_alter_table("channel", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_channel_workspace_id"), ["workspace_id"], unique=False)

    op.create_table(
        "member",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("platform_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("display_name", sa.String(length=256), nullable=False),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("deactivated", sa.Boolean(), nullable=False),
        sa.Column("opted_in", sa.Boolean(), nullable=False),
        sa.Column("share_policy", sa.String(length=8), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspace.id"], name=op.f("fk_member_workspace_id_workspace"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_member")),
        sa.UniqueConstraint("workspace_id", "platform_id", name=op.f("uq_member_workspace_id")),
    )
    with op.batch_alter_table("member", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_member_workspace_id"), ["workspace_id"], unique=False)

    op.create_table(
        "ingest_cursor",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("thread_platform_id", sa.String(length=128), nullable=False),
        sa.Column("cursor", sa.String(length=256), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"], ["channel.id"], name=op.f("fk_ingest_cursor_channel_id_channel"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ingest_cursor")),
        sa.UniqueConstraint("channel_id", "thread_platform_id", name=op.f("uq_ingest_cursor_channel_id")),
    )
    op.create_table(
        "member_exclusion",
        sa.Column("member_id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"], ["channel.id"], name=op.f("fk_member_exclusion_channel_id_channel"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["member_id"], ["member.id"], name=op.f("fk_member_exclusion_member_id_member"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("member_id", "channel_id", name=op.f("pk_member_exclusion")),
    )
    op.create_table(
        "membership",
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("member_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"], ["channel.id"], name=op.f("fk_membership_channel_id_channel"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["member_id"], ["member.id"], name=op.f("fk_membership_member_id_member"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("channel_id", "member_id", name=op.f("pk_membership")),
    )
    with op.batch_alter_table("membership", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_membership_member_id"), ["member_id"], unique=False)

    op.create_table(
        "memory_session",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("first_ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("summarized", sa.Boolean(), nullable=False),
        sa.Column("embedded", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"], ["channel.id"], name=op.f("fk_memory_session_channel_id_channel"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspace.id"],
            name=op.f("fk_memory_session_workspace_id_workspace"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_session")),
        sa.UniqueConstraint("key", name=op.f("uq_memory_session_key")),
    )
    with op.batch_alter_table("memory_session", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_memory_session_channel_id"), ["channel_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_memory_session_content_hash"), ["content_hash"], unique=False)

    op.create_table(
        "message",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("platform_id", sa.String(length=128), nullable=False),
        sa.Column("thread_parent_platform_id", sa.String(length=128), nullable=True),
        sa.Column("sender_id", sa.Integer(), nullable=False),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"], ["channel.id"], name=op.f("fk_message_channel_id_channel"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["sender_id"], ["member.id"], name=op.f("fk_message_sender_id_member"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspace.id"], name=op.f("fk_message_workspace_id_workspace"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_message")),
        sa.UniqueConstraint("workspace_id", "platform_id", name=op.f("uq_message_workspace_id")),
    )
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.create_index("ix_message_channel_ts", ["channel_id", "ts", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_message_sender_id"), ["sender_id"], unique=False)

    op.create_table(
        "session_message",
        sa.Column("session_id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["message_id"], ["message.id"], name=op.f("fk_session_message_message_id_message"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["memory_session.id"],
            name=op.f("fk_session_message_session_id_memory_session"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("session_id", "message_id", name=op.f("pk_session_message")),
    )
    with op.batch_alter_table("session_message", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_session_message_message_id"), ["message_id"], unique=False)
    _create_full_text()


def downgrade() -> None:
    _drop_full_text()
    with op.batch_alter_table("session_message", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_session_message_message_id"))

    op.drop_table("session_message")
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_message_sender_id"))
        batch_op.drop_index("ix_message_channel_ts")

    op.drop_table("message")
    with op.batch_alter_table("memory_session", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_memory_session_content_hash"))
        batch_op.drop_index(batch_op.f("ix_memory_session_channel_id"))

    op.drop_table("memory_session")
    with op.batch_alter_table("membership", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_membership_member_id"))

    op.drop_table("membership")
    op.drop_table("member_exclusion")
    op.drop_table("ingest_cursor")
    with op.batch_alter_table("member", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_member_workspace_id"))

    op.drop_table("member")
    with op.batch_alter_table("channel", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_channel_workspace_id"))

    op.drop_table("channel")
    op.drop_table("workspace")
    op.drop_table("session_summary")


# Ranked full-text search over message text; never a LIKE scan. SQLite: an FTS5 table with external content kept in
# step by triggers. PostgreSQL: a generated tsvector column with a GIN index.
SQLITE_FTS = [
    "CREATE VIRTUAL TABLE message_fts USING fts5(text, content='message', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER message_fts_ai AFTER INSERT ON message BEGIN "
    "INSERT INTO message_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER message_fts_ad AFTER DELETE ON message BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, text) VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER message_fts_au AFTER UPDATE OF text ON message BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO message_fts(rowid, text) VALUES (new.id, new.text); END",
]
POSTGRES_FTS = [
    "ALTER TABLE message ADD COLUMN text_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED",
    "CREATE INDEX ix_message_text_tsv ON message USING GIN (text_tsv)",
]


def _create_full_text() -> None:
    dialect = op.get_bind().dialect.name
    for statement in SQLITE_FTS if dialect == "sqlite" else POSTGRES_FTS if dialect == "postgresql" else []:
        op.execute(statement)


def _drop_full_text() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in ("message_fts_ai", "message_fts_ad", "message_fts_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS message_fts")
    elif dialect == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_message_text_tsv")
        op.execute("ALTER TABLE message DROP COLUMN IF EXISTS text_tsv")
