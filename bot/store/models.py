"""SQLAlchemy 2 models. The schema itself is created by the Alembic migrations in `bot/store/migrations/`.

Full-text search columns are dialect-specific and live only in the migrations: SQLite has an FTS5 table
`message_fts` (external content over `message.text`), PostgreSQL a generated `message.text_tsv` with a GIN index.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from bot.platform.port import ChannelKind, SharePolicy


NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Workspace(Base):
    __tablename__ = "workspace"
    __table_args__ = (UniqueConstraint("platform", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))  # local | slack | discord
    external_id: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(256))


class Member(Base):
    __tablename__ = "member"
    __table_args__ = (UniqueConstraint("workspace_id", "platform_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"), index=True)
    platform_id: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(256))
    display_name: Mapped[str] = mapped_column(String(256))
    is_bot: Mapped[bool] = mapped_column(Boolean, default=False)
    deactivated: Mapped[bool] = mapped_column(Boolean, default=False)
    opted_in: Mapped[bool] = mapped_column(Boolean, default=False)  # ingestion is opt-in per member
    share_policy: Mapped[str] = mapped_column(String(8), default=SharePolicy.AUTO.value)
    # The IANA zone the member reads deadlines and times in: their own choice (`/askwith timezone`), which a mirror
    # never touches, and their platform profile's (Slack's `tz`), which every mirror refreshes. NULL: not known.
    time_zone: Mapped[str | None] = mapped_column(String(64), default=None)
    platform_time_zone: Mapped[str | None] = mapped_column(String(64), default=None)

    excluded_channels: Mapped[list[Channel]] = relationship(secondary="member_exclusion", lazy="raise")


class Channel(Base):
    __tablename__ = "channel"
    __table_args__ = (UniqueConstraint("workspace_id", "platform_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"), index=True)
    platform_id: Mapped[str] = mapped_column(String(128))
    name: Mapped[str] = mapped_column(String(256))
    kind: Mapped[str] = mapped_column(String(16), default=ChannelKind.PUBLIC.value)
    # Bumped whenever the channel's memory vectors change (sessions embedded or dropped): processes that keep
    # vectors in memory (`bot.memory.vector_cache`) read a channel again when its version moved.
    memory_version: Mapped[int] = mapped_column(default=0, server_default="0")


class Membership(Base):
    """Who can see a channel. Viewer scoping joins through this table."""

    __tablename__ = "membership"

    channel_id: Mapped[int] = mapped_column(ForeignKey("channel.id", ondelete="CASCADE"), primary_key=True)
    member_id: Mapped[int] = mapped_column(ForeignKey("member.id", ondelete="CASCADE"), primary_key=True, index=True)


class MemberExclusion(Base):
    """A channel or DM a member keeps out of their agent's memory."""

    __tablename__ = "member_exclusion"

    member_id: Mapped[int] = mapped_column(ForeignKey("member.id", ondelete="CASCADE"), primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channel.id", ondelete="CASCADE"), primary_key=True)


class Message(Base):
    __tablename__ = "message"
    __table_args__ = (
        UniqueConstraint("workspace_id", "platform_id"),
        Index("ix_message_channel_ts", "channel_id", "ts", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    channel_id: Mapped[int] = mapped_column(ForeignKey("channel.id", ondelete="CASCADE"))
    platform_id: Mapped[str] = mapped_column(String(128))
    thread_parent_platform_id: Mapped[str | None] = mapped_column(String(128), default=None)
    sender_id: Mapped[int] = mapped_column(ForeignKey("member.id", ondelete="CASCADE"), index=True)
    ts: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    text: Mapped[str] = mapped_column(Text)
    # When the stored version was written (None: as posted, at `ts`): an older version arriving late never replaces it.
    edited_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)


class IngestCursor(Base):
    """How far ingestion has read a channel's history (thread_platform_id '') or one thread's replies."""

    __tablename__ = "ingest_cursor"
    __table_args__ = (UniqueConstraint("channel_id", "thread_platform_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channel.id", ondelete="CASCADE"))
    thread_platform_id: Mapped[str] = mapped_column(String(128), default="")
    cursor: Mapped[str] = mapped_column(String(256), default="")
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # A thread's state when its replies were last read (reply count, latest reply marker): re-read only on change.
    reply_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    latest_reply: Mapped[str] = mapped_column(String(64), default="", server_default="")


class MessageTombstone(Base):
    """A message deleted on the platform: a later backfill must not bring it back."""

    __tablename__ = "message_tombstone"
    __table_args__ = (UniqueConstraint("workspace_id", "platform_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    platform_id: Mapped[str] = mapped_column(String(128))
    deleted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class IngestObject(Base):
    """Ingestion state of one object (a channel, a thread, a member's token): each fails and recovers on its own."""

    __tablename__ = "ingest_object"
    __table_args__ = (UniqueConstraint("workspace_id", "kind", "object_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))  # channel | thread | member_token
    object_id: Mapped[str] = mapped_column(String(256))  # platform id (thread: its parent message id)
    status: Mapped[str] = mapped_column(String(16), default="ok")  # ok | backoff | retired | disabled | paused
    failures: Mapped[int] = mapped_column(Integer, default=0)  # consecutive failures
    last_error: Mapped[str] = mapped_column(Text, default="")
    retry_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SessionSummary(Base):
    """One objective summary per distinct session content, shared by every channel/member that holds it."""

    __tablename__ = "session_summary"

    content_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    method: Mapped[str] = mapped_column(String(16))  # llm | extractive
    model: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MemorySession(Base):
    """A run of messages in one channel, split by a time gap and a maximum size: the unit of fuzzy memory."""

    __tablename__ = "memory_session"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)  # hash of channel + message ids
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    channel_id: Mapped[int] = mapped_column(ForeignKey("channel.id", ondelete="CASCADE"), index=True)
    content_hash: Mapped[str] = mapped_column(String(64), index=True)
    first_ts: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_ts: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    message_count: Mapped[int] = mapped_column(Integer)
    summarized: Mapped[bool] = mapped_column(Boolean, default=False)
    embedded: Mapped[bool] = mapped_column(Boolean, default=False)
    # Message windows written with its vectors (keys "<key>:0" ..): lets a channel's vectors be read by key.
    # None: embedded before the count was kept.
    window_count: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)


class SessionMessage(Base):
    __tablename__ = "session_message"

    session_id: Mapped[int] = mapped_column(ForeignKey("memory_session.id", ondelete="CASCADE"), primary_key=True)
    message_id: Mapped[int] = mapped_column(ForeignKey("message.id", ondelete="CASCADE"), primary_key=True, index=True)


class UserToken(Base):
    """A member's own platform token (e.g. Slack xoxp with im:history), encrypted at rest with the settings key."""

    __tablename__ = "user_token"
    __table_args__ = (UniqueConstraint("platform", "workspace_external_id", "member_platform_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    workspace_external_id: Mapped[str] = mapped_column(String(128))
    member_platform_id: Mapped[str] = mapped_column(String(128))
    token_encrypted: Mapped[str] = mapped_column(Text)
    scopes: Mapped[str] = mapped_column(Text, default="")
    granted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class InboundDelivery(Base):
    """Platform deliveries already taken in (slash commands, events, button clicks), so a retry never acts twice."""

    __tablename__ = "inbound_delivery"
    __table_args__ = (UniqueConstraint("platform", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    key: Mapped[str] = mapped_column(String(256))
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class SlackInstallation(Base):
    """A Slack workspace that installed askwith by OAuth; its bot token encrypted like members' tokens."""

    __tablename__ = "slack_installation"
    __table_args__ = (UniqueConstraint("enterprise_id", "team_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    enterprise_id: Mapped[str] = mapped_column(String(32), default="")  # "" outside Enterprise Grid
    team_id: Mapped[str] = mapped_column(String(32))
    team_name: Mapped[str] = mapped_column(String(256), default="")
    app_id: Mapped[str] = mapped_column(String(32), default="")
    bot_id: Mapped[str] = mapped_column(String(32))
    bot_user_id: Mapped[str] = mapped_column(String(32))
    bot_token_encrypted: Mapped[str] = mapped_column(Text)
    bot_scopes: Mapped[str] = mapped_column(Text, default="")
    installer_user_id: Mapped[str] = mapped_column(String(32), default="")
    installed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class WebSession(Base):
    """A web sign-in, shared by every `askwith serve` on the database: the browser's cookie holds the session id, the
    database only its SHA-256 (a copy of this table signs no one in). Sign-out deletes the row."""

    __tablename__ = "web_session"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"), index=True)
    member: Mapped[str] = mapped_column(String(256))  # the member's name, as a sign-in link names them
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class ActionToken(Base):
    """The short-lived token of the platform event a member's message raised (Slack's `action_token`): lets the bot
    search as that member for the ask it started, in whichever process runs the ask. Encrypted like user tokens."""

    __tablename__ = "action_token"
    __table_args__ = (UniqueConstraint("workspace_id", "member_platform_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    member_platform_id: Mapped[str] = mapped_column(String(128))
    token_encrypted: Mapped[str] = mapped_column(Text)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class RateSlot(Base):
    """When a platform Web API method may next be called in a workspace, shared by every process on the database (see
    `bot.store.rate_slots`): a caller reserves the slot at `next_at` and moves it on by the method's interval."""

    __tablename__ = "rate_slot"

    team: Mapped[str] = mapped_column(String(300), primary_key=True)  # the API's address and the workspace's id
    method: Mapped[str] = mapped_column(String(100), primary_key=True)
    next_at: Mapped[float] = mapped_column(Float)  # wall-clock seconds (epoch): compared across processes
