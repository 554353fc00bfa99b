"""The record of asks: the job, its conversations, their turns, memory queries, LLM calls and consensus.

Transcripts and bench reports are views of these tables. The schema is created by migration 0005_asks
(approvals: 0008_approvals).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.models import Base


class AskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    WAITING = "waiting"  # for a member's approval: claimed and alive, but holding no worker slot
    DONE = "done"
    UNSUPPORTED = "unsupported"  # answered, but no message the agents could share supports the answer
    FAILED = "failed"
    INTERRUPTED = "interrupted"  # its process was stopped (Ctrl-C, SIGTERM) while running it in-process
    CANCELLED = "cancelled"  # its requester (or an admin) stopped it; one final post says so


FINISHED = frozenset({AskStatus.DONE, AskStatus.UNSUPPORTED, AskStatus.FAILED, AskStatus.CANCELLED})


class FinalPost(StrEnum):
    NONE = "none"
    POSTING = "posting"  # about to post: a crash here leaves it unknown whether the post went out
    POSTED = "posted"


class Ask(Base):
    __tablename__ = "ask"
    __table_args__ = (Index("ix_ask_origin_thread", "workspace_id", "origin_channel_id", "origin_thread_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default=AskStatus.QUEUED.value, index=True)
    requester: Mapped[str] = mapped_column(String(256))  # handle
    colleagues: Mapped[list[str]] = mapped_column(JSON)  # handles
    question: Mapped[str] = mapped_column(Text)
    origin_channel_id: Mapped[str | None] = mapped_column(String(128), default=None)  # None = reply by DM
    origin_thread_id: Mapped[str | None] = mapped_column(String(128), default=None)
    ablations: Mapped[list[str]] = mapped_column(JSON, default=list)
    answer: Mapped[str | None] = mapped_column(Text, default=None)
    failure: Mapped[str | None] = mapped_column(Text, default=None)  # user-readable
    final_text: Mapped[str | None] = mapped_column(Text, default=None)  # what the requester is sent, composed once
    claimed_by: Mapped[str | None] = mapped_column(String(128), default=None)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    hidden_channel_id: Mapped[str | None] = mapped_column(String(128), default=None)
    hidden_thread_id: Mapped[str | None] = mapped_column(String(128), default=None)
    final_post: Mapped[str] = mapped_column(String(8), default=FinalPost.NONE.value)
    final_channel_id: Mapped[str | None] = mapped_column(String(128), default=None)
    final_message_id: Mapped[str | None] = mapped_column(String(128), default=None)
    notices_posted: Mapped[bool] = mapped_column(Boolean, default=False)
    llm_calls: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    wall_s: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    # Migration 0010: what the ask is doing now (bot.asks.progress), a cancel request, follow-ups and thread context.
    stage: Mapped[str | None] = mapped_column(String(16), default=None)
    stage_detail: Mapped[str | None] = mapped_column(String(256), default=None)
    stage_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    cancel_requested_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    cancelled_by: Mapped[str | None] = mapped_column(String(256), default=None)  # handle
    follow_up_of: Mapped[int | None] = mapped_column(Integer, default=None)  # the ask this one continues
    context: Mapped[str | None] = mapped_column(Text, default=None)  # a thread's text ("ask about this thread")


class Conversation(Base):
    __tablename__ = "conversation"

    id: Mapped[int] = mapped_column(primary_key=True)
    ask_id: Mapped[int] = mapped_column(ForeignKey("ask.id", ondelete="CASCADE"), index=True)
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("conversation.id", ondelete="CASCADE"), default=None)
    parent_turn: Mapped[int | None] = mapped_column(Integer, default=None)  # index of the parent turn that opened it
    depth: Mapped[int] = mapped_column(Integer, default=0)
    participants: Mapped[list[str]] = mapped_column(JSON)  # handles, asker first
    question: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="running")  # running | done | abandoned
    stop_reason: Mapped[str | None] = mapped_column(String(32), default=None)
    conclusion: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Turn(Base):
    __tablename__ = "turn"
    __table_args__ = (UniqueConstraint("conversation_id", "idx"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversation.id", ondelete="CASCADE"), index=True)
    idx: Mapped[int] = mapped_column(Integer)
    agent: Mapped[str] = mapped_column(String(256))
    plan: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=None)  # snapshot after the turn
    think: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    utterance: Mapped[str] = mapped_column(Text, default="")
    solved: Mapped[int] = mapped_column(Integer, default=0)
    fake_solved: Mapped[int] = mapped_column(Integer, default=0)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)  # the rest of the step (TurnStep.dict())
    posted: Mapped[bool] = mapped_column(Boolean, default=False)  # shown in the hidden thread
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MemoryQuery(Base):
    __tablename__ = "memory_query"

    id: Mapped[int] = mapped_column(primary_key=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turn.id", ondelete="CASCADE"), index=True)
    agent: Mapped[str] = mapped_column(String(256))
    kind: Mapped[str] = mapped_column(String(8))  # clear | fuzzy
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    hit_ids: Mapped[list[str]] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    skipped: Mapped[str | None] = mapped_column(String(32), default=None)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)


class LLMCall(Base):
    __tablename__ = "llm_call"

    id: Mapped[int] = mapped_column(primary_key=True)
    ask_id: Mapped[int] = mapped_column(ForeignKey("ask.id", ondelete="CASCADE"), index=True)
    conversation_id: Mapped[int | None] = mapped_column(ForeignKey("conversation.id", ondelete="CASCADE"))
    turn_id: Mapped[int | None] = mapped_column(ForeignKey("turn.id", ondelete="CASCADE"))
    purpose: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(128))
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    json_mode: Mapped[str] = mapped_column(String(16), default="text")
    repaired: Mapped[bool] = mapped_column(Boolean, default=False)
    cached: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[str | None] = mapped_column(Text, default=None)


class Consensus(Base):
    __tablename__ = "consensus"

    id: Mapped[int] = mapped_column(primary_key=True)
    ask_id: Mapped[int] = mapped_column(ForeignKey("ask.id", ondelete="CASCADE"), unique=True)
    answer: Mapped[str] = mapped_column(Text, default="")
    agreed: Mapped[bool] = mapped_column(Boolean, default=False)
    statements_agree: Mapped[bool] = mapped_column(Boolean, default=False)
    ratio: Mapped[float | None] = mapped_column(Float, default=None)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Approval(Base):
    """A member's approval of what their agent would share: asked once, decided once (by whichever process hears the
    click), read by whichever worker runs or resumes the ask."""

    __tablename__ = "approval"

    id: Mapped[str] = mapped_column(String(160), primary_key=True)  # stable per ask, conversation, turn and content
    ask_id: Mapped[int | None] = mapped_column(ForeignKey("ask.id", ondelete="CASCADE"), index=True, default=None)
    member_id: Mapped[str] = mapped_column(String(128))  # platform id of the member who decides
    status: Mapped[str] = mapped_column(String(16), default="pending")  # pending | approved | denied | timeout
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    deadline_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)


class AskFeedback(Base):
    """One member's vote on an ask's answer (+1 / -1); voting again changes it."""

    __tablename__ = "ask_feedback"
    __table_args__ = (UniqueConstraint("ask_id", "member"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    ask_id: Mapped[int] = mapped_column(ForeignKey("ask.id", ondelete="CASCADE"), index=True)
    member: Mapped[str] = mapped_column(String(256))  # handle
    vote: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
