"""A deterministic, large synthetic workspace for memory benchmarks.

    spec = WorkspaceSpec(messages=1_000_000)
    workspace_id = await load_synthetic(db, spec)        # builds once; a second call finds it and returns at once

Shape: a few thousand members; public channels of tens to hundreds of members, small private channels, group DMs
and many DMs; channel activity is heavy-tailed (a few busy channels, many quiet ones). Text follows a Zipf law over a
vocabulary whose head is English stop words and everyday workplace words and whose long tail is pronounceable
made-up words (no word list ships with the machine this runs on), so the frequency profile of real chat holds.

Members, channels and memberships go through `ChatStore`; messages, the bulk, are inserted raw into the same
`message` table (SQLite: one executemany, FTS5 kept in step by its triggers; PostgreSQL: COPY).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.memory.keywords import STOP_WORDS
from bot.platform.port import Channel, ChannelKind, Member
from bot.store import models
from bot.store.chat_store import ChatStore, WorkspaceKey
from bot.store.db import Database


GENERATOR_VERSION = 2
START = datetime(2025, 1, 1, tzinfo=UTC)
WORKPLACE_WORDS = """
    meeting deploy release budget review customer design launch deadline sprint report invoice server database
    ticket bug feature roadmap hiring interview offsite lunch coffee travel flight hotel contract vendor pricing
    demo slides dashboard metrics revenue quarter planning standup retro incident outage rollback migration backup
    security audit password laptop office kitchen parking badge payroll holiday vacation sick doctor dentist
    birthday party cake team project client proposal draft feedback approval signoff schedule calendar agenda
    invite thursday friday monday tuesday wednesday morning afternoon evening tomorrow yesterday week month
    docs readme test staging production cluster latency memory cpu disk network firewall certificate domain email
    newsletter marketing campaign blog video podcast webinar conference booth swag printer scanner projector room
    floor building elevator shuttle train bus taxi weather rain snow lunchbox pizza sushi salad tea water gym yoga
    onboarding training mentor manager director intern contractor freelancer legal compliance privacy policy risk
    shipping warehouse inventory order refund discount coupon subscription renewal churn pipeline lead prospect
    """.split()
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ar", "en", "is", "or")]


@dataclass(frozen=True)
class WorkspaceSpec:
    messages: int = 1_000_000
    members: int = 2_000
    public_channels: int = 250
    private_channels: int = 400
    group_dms: int = 500
    dms: int = 8_000
    tail_words: int = 30_000
    days: int = 365
    seed: int = 7

    @property
    def key(self) -> WorkspaceKey:
        return WorkspaceKey("synthetic", f"v{GENERATOR_VERSION}-{self.messages}-{self.members}-seed{self.seed}")


# ---------------------------------------------------------------------- the world's shape
def vocabulary(spec: WorkspaceSpec) -> list[str]:
    """Ranked vocabulary: stop words, workplace words, then made-up words (distinct, deterministic)."""
    head = sorted(STOP_WORDS - {"s", "t", "don"}) + WORKPLACE_WORDS
    rng = np.random.default_rng(spec.seed + 1)
    tail: dict[str, None] = {}
    while len(tail) < spec.tail_words:
        word = "".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), size=int(rng.integers(2, 5))))
        if word not in STOP_WORDS:
            tail[word] = None
    return head + list(tail)


def members(spec: WorkspaceSpec) -> list[Member]:
    return [Member(f"U{i:05d}", f"user{i:05d}", f"User {i}") for i in range(spec.members)]


def channels(spec: WorkspaceSpec) -> list[Channel]:
    rng = np.random.default_rng(spec.seed)
    people = [m.id for m in members(spec)]

    def pick(size: int) -> tuple[str, ...]:
        return tuple(people[i] for i in sorted(rng.choice(len(people), size=size, replace=False)))

    made: list[Channel] = []
    for i in range(spec.public_channels):
        size = int(np.clip(rng.lognormal(4.0, 1.0), 10, 600))
        made.append(Channel(f"C{i:05d}", f"public-{i}", ChannelKind.PUBLIC, pick(size)))
    for i in range(spec.private_channels):
        made.append(Channel(f"G{i:05d}", f"private-{i}", ChannelKind.PRIVATE, pick(int(rng.integers(3, 26)))))
    for i in range(spec.group_dms):
        made.append(Channel(f"M{i:05d}", f"group-{i}", ChannelKind.GROUP_DM, pick(int(rng.integers(3, 7)))))
    pairs: set[tuple[str, ...]] = set()
    while len(pairs) < spec.dms:
        pairs.add(pick(2))
    made += [Channel(f"D{i:05d}", "-".join(p), ChannelKind.DM, p) for i, p in enumerate(sorted(pairs))]
    return made


def message_rows(spec: WorkspaceSpec, chans: list[Channel]) -> Iterator[tuple[int, str, str, datetime, str]]:
    """(channel index, platform id, sender platform id, ts, text) for every message, oldest first across the whole
    workspace, as a live workspace stores them (so a channel's messages are spread over the whole id range)."""
    rng = np.random.default_rng(spec.seed + 2)
    vocab = np.array(vocabulary(spec), dtype=object)
    weights = 1.0 / (np.arange(len(vocab)) + 2.7) ** 1.07
    activity = rng.lognormal(0.0, 1.3, size=len(chans))
    channel_of = rng.choice(len(chans), size=spec.messages, p=activity / activity.sum())
    seconds = rng.integers(0, spec.days * 86_400, size=spec.messages)
    sender_pick = rng.random(size=spec.messages)
    lengths = 3 + rng.poisson(9, size=spec.messages)
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=weights / weights.sum())
    bounds = np.concatenate(([0], np.cumsum(lengths)))
    for n, i in enumerate(np.argsort(seconds, kind="stable")):
        channel = chans[channel_of[i]]
        sender = channel.member_ids[int(sender_pick[i] * len(channel.member_ids))]
        text = " ".join(vocab[words[bounds[i] : bounds[i + 1]]])
        ts = START + timedelta(seconds=int(seconds[i]), microseconds=int(i) % 1_000_000)
        yield int(channel_of[i]), f"s{n:07d}", sender, ts, text


# ---------------------------------------------------------------------- loading
async def find_synthetic(db: Database, spec: WorkspaceSpec) -> int | None:
    """The workspace id when this exact workspace is already fully loaded."""
    async with db.session() as session:
        workspace_id = (
            await session.execute(
                select(models.Workspace.id).where(
                    models.Workspace.platform == spec.key.platform,
                    models.Workspace.external_id == spec.key.external_id,
                )
            )
        ).scalar_one_or_none()
        if workspace_id is None:
            return None
        count = await ChatStore(db).message_count(session, workspace_id)
    return workspace_id if count == spec.messages else None


async def load_synthetic(db: Database, spec: WorkspaceSpec) -> int:
    """Build the workspace in `db` unless it is there already; returns its id."""
    if (found := await find_synthetic(db, spec)) is not None:
        return found
    store = ChatStore(db)
    chans = channels(spec)
    async with db.session() as session, session.begin():
        # A half-built copy (an interrupted earlier run) is dropped and built again.
        await session.execute(
            delete(models.Workspace).where(
                models.Workspace.platform == spec.key.platform, models.Workspace.external_id == spec.key.external_id
            )
        )
        workspace_id = await store.ensure_workspace(session, spec.key, f"synthetic {spec.messages:,} messages")
        member_ids = await store.upsert_members(session, workspace_id, members(spec))
        channel_ids = await _insert_channels(session, store, workspace_id, chans, member_ids)
    rows = (
        (workspace_id, channel_ids[chans[c].id], pid, member_ids[sender], ts, text)
        for c, pid, sender, ts, text in message_rows(spec, chans)
    )
    if db.dialect == "postgresql":
        await _copy_postgres(db, rows)
    else:
        await _insert_sqlite(db, rows)
    async with db.engine.begin() as conn:
        await conn.exec_driver_sql("ANALYZE")
    return workspace_id


async def _insert_channels(
    session: AsyncSession, store: ChatStore, workspace_id: int, chans: list[Channel], member_ids: dict[str, int]
) -> dict[str, int]:
    """Channels and memberships in two bulk statements (ChatStore replaces memberships channel by channel)."""
    await session.execute(
        insert(models.Channel),
        [{"workspace_id": workspace_id, "platform_id": c.id, "name": c.name, "kind": str(c.kind)} for c in chans],
    )
    channel_ids = await store.channel_ids(session, workspace_id)
    await session.execute(
        insert(models.Membership),
        [{"channel_id": channel_ids[c.id], "member_id": member_ids[m]} for c in chans for m in c.member_ids],
    )
    return channel_ids


async def _insert_sqlite(db: Database, rows: Iterator[tuple]) -> None:
    sql = "INSERT INTO message (workspace_id, channel_id, platform_id, sender_id, ts, text) VALUES (?, ?, ?, ?, ?, ?)"
    async with db.engine.begin() as conn:
        # A bulk load touches the message table, two indexes and the FTS index at once: give it room in memory.
        await conn.exec_driver_sql("PRAGMA cache_size=-400000")
        while batch := list(itertools.islice(rows, 100_000)):
            # SQLAlchemy's SQLite DateTime keeps UTC as naive ISO text; store the same form.
            await conn.exec_driver_sql(
                sql, [(w, c, p, s, ts.strftime("%Y-%m-%d %H:%M:%S.%f"), t) for w, c, p, s, ts, t in batch]
            )
        await conn.exec_driver_sql("INSERT INTO message_fts(message_fts) VALUES ('optimize')")
        await conn.exec_driver_sql("PRAGMA cache_size=-2000")  # back to the default for later users


async def _copy_postgres(db: Database, rows: Iterator[tuple]) -> None:
    columns = ["workspace_id", "channel_id", "platform_id", "sender_id", "ts", "text"]
    async with db.engine.begin() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        while batch := list(itertools.islice(rows, 100_000)):
            await raw.copy_records_to_table("message", records=batch, columns=columns)
