"""SQLAlchemy models of negotiations: member profiles, each negotiation, and every step of it.

A step is one answer of one agent (a turn has several when invalid proposals were retried), so the transcript viewer
can show a negotiation exactly as it ran: private reflections, delivered moves, rejected attempts with their
feedback, utility estimates and the LLM call behind each.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.models import Base


class NegotiationProfile(Base):
    """A member's work items (atomic tasks they hold) and private value and cost per atomic task."""

    __tablename__ = "negotiation_profile"

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"), index=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("member.id", ondelete="CASCADE"), unique=True)
    tasks: Mapped[list[dict[str, Any]]] = mapped_column(JSON)  # [{"id", "name", "parent"}] held now
    preferences: Mapped[dict[str, dict[str, float]]] = mapped_column(JSON)  # task id -> {"value", "cost"}
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Negotiation(Base):
    __tablename__ = "negotiation"

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int | None] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"), index=True)
    member_a_id: Mapped[int | None] = mapped_column(ForeignKey("member.id", ondelete="SET NULL"))
    member_b_id: Mapped[int | None] = mapped_column(ForeignKey("member.id", ondelete="SET NULL"))
    agent_a: Mapped[str] = mapped_column(String(256))
    agent_b: Mapped[str] = mapped_column(String(256))
    scenario_id: Mapped[str] = mapped_column(String(128))
    setting: Mapped[str] = mapped_column(String(32))
    variant: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    scenario: Mapped[dict[str, Any]] = mapped_column(JSON)  # the full scenario, private values included
    outcome: Mapped[str] = mapped_column(String(16))  # agreement | no_agreement | error
    error: Mapped[str] = mapped_column(Text, default="")
    turns_played: Mapped[int] = mapped_column(Integer)
    agreed: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)  # {"give", "take"} from proposer
    proposer: Mapped[str | None] = mapped_column(String(256), default=None)
    final_allocation: Mapped[dict[str, str]] = mapped_column(JSON)
    u_a: Mapped[float] = mapped_column(Float)
    u_b: Mapped[float] = mapped_column(Float)
    social_welfare: Mapped[float] = mapped_column(Float)
    l2_to_pareto: Mapped[float] = mapped_column(Float)
    model: Mapped[str] = mapped_column(String(128), default="")
    llm_calls: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    # Members' confirmation of an agreed trade: pending | confirmed | declined | none (nothing to confirm)
    status: Mapped[str] = mapped_column(String(16), default="none")
    approval_a: Mapped[str | None] = mapped_column(String(16), default=None)
    approval_b: Mapped[str | None] = mapped_column(String(16), default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class NegotiationStep(Base):
    __tablename__ = "negotiation_step"

    id: Mapped[int] = mapped_column(primary_key=True)
    negotiation_id: Mapped[int] = mapped_column(ForeignKey("negotiation.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)  # order within the negotiation
    turn: Mapped[int] = mapped_column(Integer)
    agent: Mapped[str] = mapped_column(String(256))
    phase: Mapped[str] = mapped_column(String(16))  # consider | move
    attempt: Mapped[int] = mapped_column(Integer)  # 1-based within the turn
    instruction: Mapped[str] = mapped_column(Text, default="")
    reply: Mapped[str] = mapped_column(Text, default="")
    message: Mapped[str] = mapped_column(Text, default="")
    move: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    feedback: Mapped[str] = mapped_column(Text, default="")  # validation feedback; empty = valid
    delivered: Mapped[bool] = mapped_column(Boolean, default=False)
    estimate: Mapped[float | None] = mapped_column(Float, default=None)
    estimate_target: Mapped[float | None] = mapped_column(Float, default=None)
    purpose: Mapped[str] = mapped_column(String(64), default="")
    model: Mapped[str] = mapped_column(String(128), default="")
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    llm_error: Mapped[str | None] = mapped_column(Text, default=None)
