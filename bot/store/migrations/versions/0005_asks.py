"""asks: the ask job, its conversations, turns, memory queries, LLM calls and consensus

Revision ID: 0005_asks
Revises: 0004_scoped_fts
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0005_asks"
down_revision: str | None = "0004_scoped_fts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TZ = sa.DateTime(timezone=True)


def _fk(column: str, target: str, table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "ask",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("requester", sa.String(length=256), nullable=False),
        sa.Column("colleagues", sa.JSON(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("origin_channel_id", sa.String(length=128), nullable=True),
        sa.Column("origin_thread_id", sa.String(length=128), nullable=True),
        sa.Column("ablations", sa.JSON(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("failure", sa.Text(), nullable=True),
        sa.Column("final_text", sa.Text(), nullable=True),
        sa.Column("claimed_by", sa.String(length=128), nullable=True),
        sa.Column("heartbeat_at", TZ, nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("hidden_channel_id", sa.String(length=128), nullable=True),
        sa.Column("hidden_thread_id", sa.String(length=128), nullable=True),
        sa.Column("final_post", sa.String(length=8), nullable=False),
        sa.Column("final_channel_id", sa.String(length=128), nullable=True),
        sa.Column("final_message_id", sa.String(length=128), nullable=True),
        sa.Column("notices_posted", sa.Boolean(), nullable=False),
        sa.Column("llm_calls", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("wall_s", sa.Float(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("finished_at", TZ, nullable=True),
        _fk("workspace_id", "workspace", "ask"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ask")),
    )
    op.create_index(op.f("ix_ask_workspace_id"), "ask", ["workspace_id"])
    op.create_index(op.f("ix_ask_status"), "ask", ["status"])

    op.create_table(
        "conversation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("ask_id", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.Integer(), nullable=True),
        sa.Column("parent_turn", sa.Integer(), nullable=True),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("participants", sa.JSON(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("stop_reason", sa.String(length=32), nullable=True),
        sa.Column("conclusion", sa.Text(), nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        _fk("ask_id", "ask", "conversation"),
        _fk("parent_id", "conversation", "conversation"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversation")),
    )
    op.create_index(op.f("ix_conversation_ask_id"), "conversation", ["ask_id"])

    op.create_table(
        "turn",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("agent", sa.String(length=256), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=True),
        sa.Column("think", sa.JSON(), nullable=True),
        sa.Column("utterance", sa.Text(), nullable=False),
        sa.Column("solved", sa.Integer(), nullable=False),
        sa.Column("fake_solved", sa.Integer(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("posted", sa.Boolean(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        _fk("conversation_id", "conversation", "turn"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_turn")),
        sa.UniqueConstraint("conversation_id", "idx", name=op.f("uq_turn_conversation_id")),
    )
    op.create_index(op.f("ix_turn_conversation_id"), "turn", ["conversation_id"])

    op.create_table(
        "memory_query",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("turn_id", sa.Integer(), nullable=False),
        sa.Column("agent", sa.String(length=256), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("hit_ids", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("skipped", sa.String(length=32), nullable=True),
        sa.Column("latency_s", sa.Float(), nullable=False),
        _fk("turn_id", "turn", "memory_query"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_query")),
    )
    op.create_index(op.f("ix_memory_query_turn_id"), "memory_query", ["turn_id"])

    op.create_table(
        "llm_call",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("ask_id", sa.Integer(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=True),
        sa.Column("turn_id", sa.Integer(), nullable=True),
        sa.Column("purpose", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("json_mode", sa.String(length=16), nullable=False),
        sa.Column("repaired", sa.Boolean(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        _fk("ask_id", "ask", "llm_call"),
        _fk("conversation_id", "conversation", "llm_call"),
        _fk("turn_id", "turn", "llm_call"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_llm_call")),
    )
    op.create_index(op.f("ix_llm_call_ask_id"), "llm_call", ["ask_id"])

    op.create_table(
        "consensus",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("ask_id", sa.Integer(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("agreed", sa.Boolean(), nullable=False),
        sa.Column("statements_agree", sa.Boolean(), nullable=False),
        sa.Column("ratio", sa.Float(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        _fk("ask_id", "ask", "consensus"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consensus")),
        sa.UniqueConstraint("ask_id", name=op.f("uq_consensus_ask_id")),
    )


def downgrade() -> None:
    for table in ("consensus", "llm_call", "memory_query", "turn", "conversation", "ask"):
        op.drop_table(table)
