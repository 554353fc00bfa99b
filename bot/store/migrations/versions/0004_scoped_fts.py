"""scoped full-text index: SQLite's FTS5 index also holds each message's channel as a `scope` token

Why: a viewer sees a few dozen channels of thousands. Matching keywords across the whole workspace and only then
dropping what the viewer cannot see costs time in proportion to the workspace. With the channel as a token in the
same index, FTS5 intersects "these keywords" with "these channels" inside the index. The SQL scope condition
(`visible_channels`) stays in every query; the token only makes it cheap. PostgreSQL needs no change.

Revision ID: 0004_scoped_fts
Revises: 0003_negotiation
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op


revision: str = "0004_scoped_fts"
down_revision: str | None = "0003_negotiation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TOKENIZER = "porter unicode61 remove_diacritics 2"
# The scope token of a message is 'c' followed by its channel's database id (bot.memory.keywords.scope_token).
SCOPE = "'c' || {row}.channel_id"
SCOPED = [
    "CREATE VIEW message_fts_source AS SELECT id, text, 'c' || channel_id AS scope FROM message",
    "CREATE VIRTUAL TABLE message_fts USING fts5(text, scope, content='message_fts_source', content_rowid='id', "
    f"tokenize='{TOKENIZER}')",
    "CREATE TRIGGER message_fts_ai AFTER INSERT ON message BEGIN "
    f"INSERT INTO message_fts(rowid, text, scope) VALUES (new.id, new.text, {SCOPE.format(row='new')}); END",
    "CREATE TRIGGER message_fts_ad AFTER DELETE ON message BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, text, scope) "
    f"VALUES ('delete', old.id, old.text, {SCOPE.format(row='old')}); END",
    "CREATE TRIGGER message_fts_au AFTER UPDATE OF text, channel_id ON message BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, text, scope) "
    f"VALUES ('delete', old.id, old.text, {SCOPE.format(row='old')}); "
    f"INSERT INTO message_fts(rowid, text, scope) VALUES (new.id, new.text, {SCOPE.format(row='new')}); END",
    "INSERT INTO message_fts(message_fts) VALUES ('rebuild')",
]
UNSCOPED = [
    "CREATE VIRTUAL TABLE message_fts USING fts5(text, content='message', content_rowid='id', "
    f"tokenize='{TOKENIZER}')",
    "CREATE TRIGGER message_fts_ai AFTER INSERT ON message BEGIN "
    "INSERT INTO message_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER message_fts_ad AFTER DELETE ON message BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, text) VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER message_fts_au AFTER UPDATE OF text ON message BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO message_fts(rowid, text) VALUES (new.id, new.text); END",
    "INSERT INTO message_fts(message_fts) VALUES ('rebuild')",
]


def _drop_fts() -> None:
    for name in ("message_fts_ai", "message_fts_ad", "message_fts_au"):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.execute("DROP TABLE IF EXISTS message_fts")
    op.execute("DROP VIEW IF EXISTS message_fts_source")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    _drop_fts()
    for statement in SCOPED:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    _drop_fts()
    for statement in UNSCOPED:
        op.execute(statement)
