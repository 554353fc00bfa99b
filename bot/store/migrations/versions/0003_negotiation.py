"""negotiation: member profiles, negotiations and their steps

Revision ID: 0003_negotiation
Revises: 0001_foundation
Create Date: 2026-11-22 10:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0003_negotiation"
down_revision: str | None = "0001_foundation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    _create_profile()
    _create_negotiation()
    _create_step()


def _create_profile() -> None:
    op.create_table(
        "negotiation_profile",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("member_id", sa.Integer(), nullable=False),
        sa.Column("tasks", sa.JSON(), nullable=False),
        sa.Column("preferences", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspace.id"],
            name=op.f("fk_negotiation_profile_workspace_id_workspace"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["member_id"], ["member.id"], name=op.f("fk_negotiation_profile_member_id_member"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_negotiation_profile")),
        sa.UniqueConstraint("member_id", name=op.f("uq_negotiation_profile_member_id")),
    )
    with op.batch_alter_table("negotiation_profile", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_negotiation_profile_workspace_id"), ["workspace_id"], unique=False)


def _create_negotiation() -> None:
    op.create_table(
        "negotiation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=True),
        sa.Column("member_a_id", sa.Integer(), nullable=True),
        sa.Column("member_b_id", sa.Integer(), nullable=True),
        sa.Column("agent_a", sa.String(length=256), nullable=False),
        sa.Column("agent_b", sa.String(length=256), nullable=False),
        sa.Column("scenario_id", sa.String(length=128), nullable=False),
        sa.Column("setting", sa.String(length=32), nullable=False),
        sa.Column("variant", sa.String(length=64), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("scenario", sa.JSON(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("turns_played", sa.Integer(), nullable=False),
        sa.Column("agreed", sa.JSON(), nullable=True),
        sa.Column("proposer", sa.String(length=256), nullable=True),
        sa.Column("final_allocation", sa.JSON(), nullable=False),
        sa.Column("u_a", sa.Float(), nullable=False),
        sa.Column("u_b", sa.Float(), nullable=False),
        sa.Column("social_welfare", sa.Float(), nullable=False),
        sa.Column("l2_to_pareto", sa.Float(), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("llm_calls", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("approval_a", sa.String(length=16), nullable=True),
        sa.Column("approval_b", sa.String(length=16), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspace.id"], name=op.f("fk_negotiation_workspace_id_workspace"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["member_a_id"], ["member.id"], name=op.f("fk_negotiation_member_a_id_member"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["member_b_id"], ["member.id"], name=op.f("fk_negotiation_member_b_id_member"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_negotiation")),
    )
    with op.batch_alter_table("negotiation", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_negotiation_workspace_id"), ["workspace_id"], unique=False)


def _create_step() -> None:
    op.create_table(
        "negotiation_step",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("negotiation_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("agent", sa.String(length=256), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("instruction", sa.Text(), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("move", sa.JSON(), nullable=True),
        sa.Column("feedback", sa.Text(), nullable=False),
        sa.Column("delivered", sa.Boolean(), nullable=False),
        sa.Column("estimate", sa.Float(), nullable=True),
        sa.Column("estimate_target", sa.Float(), nullable=True),
        sa.Column("purpose", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("llm_error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["negotiation_id"],
            ["negotiation.id"],
            name=op.f("fk_negotiation_step_negotiation_id_negotiation"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_negotiation_step")),
    )
    with op.batch_alter_table("negotiation_step", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_negotiation_step_negotiation_id"), ["negotiation_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("negotiation_step", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_negotiation_step_negotiation_id"))
    op.drop_table("negotiation_step")
    with op.batch_alter_table("negotiation", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_negotiation_workspace_id"))
    op.drop_table("negotiation")
    with op.batch_alter_table("negotiation_profile", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_negotiation_profile_workspace_id"))
    op.drop_table("negotiation_profile")
