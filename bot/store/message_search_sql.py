"""The SQL of a message search (clear memory's full-text search, hybrid retrieval's read of chosen ids), built once
per `SearchShape` and reused with bind parameters. Memory says what to search and for whom (a shape and the
parameters); the statements, their tables and joins are the store's (`bot.store.message_search_reads` runs them).

    statement = search(SearchShape(dialect="sqlite", context=True, terms=2))   # cached per shape
    rows = (await conn.execute(statement, {"workspace_id": 1, "viewer_id": 7, "match": '"coffee"', ...})).all()

Every statement carries the viewer's scope (`channels_visible_to`) as a condition on each message it reads. The viewer
enters as bind parameters (`workspace_id`, `viewer_id`), so a compiled statement serves every viewer and building
SQLAlchemy expressions stays off the hot path of a search.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sqlalchemy import (
    CTE,
    ColumnElement,
    FromClause,
    Integer,
    Select,
    bindparam,
    case,
    func,
    literal_column,
    or_,
    select,
    table,
    tuple_,
    union_all,
)

from bot.store import models
from bot.store.channel_scope import channels_visible_to


M = models.Message
ENGLISH = literal_column("'english'::regconfig")


@dataclass(frozen=True)
class SearchShape:
    """What varies between search statements (everything else is a bind parameter)."""

    dialect: str
    context: bool = False
    sender: bool = False
    channel: bool = False
    since: bool = False
    until: bool = False
    terms: int = 0  # keywords counted by `coordination`, bound as term0, term1, ...


def bound_viewer_channels() -> Select[tuple[int]]:
    """The channels visible to the viewer bound as `viewer_id`: the scope of any viewer."""
    return channels_visible_to(bindparam("viewer_id", type_=Integer))


def scope(*, drive: bool = True) -> list[ColumnElement[bool]]:
    """The viewer's scope as a condition on a message row: one of their visible channels, in their workspace.

    The workspace is checked on the channel, not on the message: a condition on message.workspace_id tempts
    SQLite into walking every message of the workspace through its (workspace_id, platform_id) index. With
    `drive=False` the condition only checks rows found otherwise (by id): `channel_id + 0` cannot use the channel
    index, so the planner does not walk every message of the viewer's channels looking for them.
    """
    channel = models.Channel.__table__.alias("scope_channel")  # never correlated with a channel of the outer query
    channels = select(channel.c.id).where(
        channel.c.workspace_id == bindparam("workspace_id", type_=Integer), channel.c.id.in_(bound_viewer_channels())
    )
    return [(M.channel_id if drive else M.channel_id + 0).in_(channels)]


def filters(shape: SearchShape) -> list[ColumnElement[bool]]:
    """The optional sender (handle or platform id), channel (name or platform id) and time filters."""
    conditions: list[ColumnElement[bool]] = []
    if shape.sender:
        conditions.append(M.sender_id.in_(_named(models.Member, "sender")))
    if shape.channel:
        conditions.append(M.channel_id.in_(_named(models.Channel, "channel")))
    if shape.since:
        conditions.append(M.ts >= bindparam("since", type_=M.ts.type))
    if shape.until:
        conditions.append(M.ts <= bindparam("until", type_=M.ts.type))
    return conditions


def _named(kind: type[models.Member] | type[models.Channel], param: str) -> Select[tuple[int]]:
    """The ids of the workspace's members (or channels) whose name or platform id is bound as `param`."""
    value = bindparam(param)
    return select(kind.id).where(
        kind.workspace_id == bindparam("workspace_id"), or_(kind.name == value, kind.platform_id == value)
    )


def full_text(dialect: str) -> tuple[FromClause, ColumnElement[bool], ColumnElement[float]]:
    """(rows to search, match condition on bind parameter `match`, score where higher is better)."""
    if dialect == "postgresql":
        tsv = literal_column("message.text_tsv")
        tsquery = func.to_tsquery(ENGLISH, bindparam("match"))
        # Normalisation 1 divides by 1 + log(length): long messages do not win by sheer size.
        return M.__table__, tsv.op("@@")(tsquery), func.ts_rank_cd(tsv, tsquery, 1)
    fts = literal_column("message_fts")
    # The unary + keeps SQLite from probing the FTS index once per message row (a plan it likes, and a slow one):
    # the index is walked once and each match looks its message up by primary key.
    source = table("message_fts").join(M, M.id == literal_column("+message_fts.rowid"))
    # bm25() is lower-is-better; negate it so every engine reports higher-is-better. The scope column weighs 0.
    return source, fts.op("MATCH")(bindparam("match")), -func.bm25(fts, 1.0, 0.0)


WORD_STARTS = ("\n", "-", "(")  # what a word follows besides a space, as `folded` reads


def folded(text: ColumnElement[str]) -> ColumnElement[str]:
    """The text lower-cased, each word preceded by a space, for `coordination`: "(to Ross) no-one's" becomes
    "  to ross) no one's" (`lower` folds ASCII only on SQLite)."""
    out = " " + func.lower(text)
    for separator in WORD_STARTS:
        out = func.replace(out, separator, " ")
    return out


def coordination(dialect: str, text: ColumnElement[str], terms: int) -> ColumnElement[int]:
    """How many of the bound keyword stems (`term0`...) begin a word of a `folded` text, each counted once.

    The engines' own ranks normalise by length, so a one-word line holding one rare keyword outranks a sentence
    holding four of them; counting the keywords first (the "coordination" of classic retrieval) puts the line that
    matches more of the question first, the engine's rank ordering lines that hold as many. A stem is looked for at
    a word's start ("one" is in "no-one's", not in "bones"): cheap, the same on both engines, and it only orders
    lines the index matched.
    """
    contains = func.strpos if dialect == "postgresql" else func.instr
    counts = [case((contains(text, " " + bindparam(f"term{i}")) > 0, 1), else_=0) for i in range(terms)]
    return sum(counts[1:], counts[0]) if counts else literal_column("0")


@cache
def sqlite_match_count() -> Select[tuple[int]]:
    """How many messages of any channel match `match`, counted no further than `cap` (SQLite: decides whether the
    FTS index should intersect with the viewer's channels)."""
    matching = (
        select(literal_column("1"))
        .select_from(table("message_fts"))
        .where(literal_column("message_fts").op("MATCH")(bindparam("match")))
        .limit(bindparam("cap", type_=Integer))
        .subquery()
    )
    return select(func.count()).select_from(matching)


@cache
def sqlite_scope_probe() -> Select[tuple[int, int]]:
    """The viewer's visible channel ids, each row also carrying `sqlite_match_count`."""
    channel = bound_viewer_channels().subquery("visible")
    return select(channel.c.channel_id, sqlite_match_count().scalar_subquery())


@cache
def search(shape: SearchShape) -> Select[tuple]:
    """One statement for a whole search: the ranked hits, then (with context) the walks to their neighbours, then
    the message views. Rows: (hit_id, id, platform_id, channel_platform_id, channel_name, sender_name, ts, text,
    score, duplicates); score and duplicates are set on the hit's own row."""
    return _with_context(_ranked(shape), context=shape.context)


@cache
def ranked(shape: SearchShape) -> Select[tuple[int, float]]:
    """Only the ranked hits, (id, score), best first: the lexical side of hybrid retrieval."""
    best = _ranked(shape)
    return select(best.c.id, best.c.score).order_by(best.c.score.desc(), best.c.id)


@cache
def chosen(shape: SearchShape) -> Select[tuple]:
    """The views of the messages whose ids are bound as `ids` and that pass the shape's filters (and, with context,
    their neighbours up to `window` on each side), as rows of `search` (score and duplicates 0): every row checked
    against the viewer's scope, so an id from anywhere (a vector index) can never show a message the viewer cannot
    see."""
    picked = (
        select(M.id.label("id"), literal_column("0").label("score"), literal_column("0").label("duplicates"))
        .where(M.id.in_(bindparam("ids", expanding=True)), *scope(drive=False), *filters(shape))
        .cte("picked")
    )
    return _with_context(picked, context=shape.context)


def _with_context(hits: CTE, *, context: bool) -> Select[tuple]:
    """The views of `hits` (id, score, duplicates) and, with `context`, of their neighbours up to `window` on each
    side, as rows of `search`: score and duplicates are set on each hit's own row."""
    seeds = select(hits.c.id.label("hit_id"), hits.c.id)
    if context:
        before, after = _walk(hits, before=True), _walk(hits, before=False)
        seeds = union_all(
            select(before.c.hit_id, before.c.id), select(after.c.hit_id, after.c.id).where(after.c.depth > 0)
        )
    wanted = seeds.subquery("wanted")
    own = hits.alias("own")
    return _views(wanted).add_columns(own.c.score, own.c.duplicates).outerjoin(own, own.c.id == wanted.c.id)


def _ranked(shape: SearchShape) -> CTE:
    """Visible matches, fan-out copies (same sender, time and text) grouped into one row that the lowest id stands
    for, best first, at most `limit` rows."""
    source, matches, rank = full_text(shape.dialect)
    hits = (
        select(M.id, M.sender_id, M.ts, M.text, rank.label("rank"))
        .select_from(source)
        .where(matches, *scope(), *filters(shape))
        .cte("hits")
        # SQLite computes bm25() only while it walks the FTS table, not inside the grouping: keep the two apart.
        .prefix_with("MATERIALIZED")
    )
    # Fan-out copies grouped, each group's text folded once (both engines would fold it again for every keyword).
    groups = (
        select(
            func.min(hits.c.id).label("id"),
            (func.count() - 1).label("duplicates"),
            func.max(hits.c.rank / (hits.c.rank + 1.0)).label("squashed"),
            hits.c.ts,
            folded(hits.c.text).label("folded"),
        )
        .group_by(hits.c.sender_id, hits.c.ts, hits.c.text)
        .cte("groups")
        .prefix_with("MATERIALIZED")
    )
    # The keywords held, then the engine's rank squashed into [0, 1): one number, higher is better.
    best = (coordination(shape.dialect, groups.c.folded, shape.terms) + groups.c.squashed).label("score")
    return (
        select(groups.c.id, groups.c.duplicates, best)
        .order_by(best.desc(), groups.c.ts.desc(), groups.c.id)
        .limit(bindparam("limit", type_=Integer))
        .cte("ranked")
        .prefix_with("MATERIALIZED")  # read by both walks and by the final join: run it once
    )


def _walk(best: CTE, *, before: bool) -> CTE:
    """From each hit, step to the previous (or next) message of its channel, `window` times: each step one index
    seek. (SQLite has no LATERAL join; a correlated `IN (... LIMIT n)` would run once per message of the channel.)"""
    name = "before" if before else "after"
    seed = select(M.id.label("hit_id"), M.id.label("id"), M.channel_id, M.ts, literal_column("0").label("depth")).join(
        best, best.c.id == M.id
    )
    walk = seed.cte(name, recursive=True)
    step = M.__table__.alias(f"{name}_step")
    position, origin = tuple_(step.c.ts, step.c.id), tuple_(walk.c.ts, walk.c.id)
    next_id = (
        select(step.c.id)
        .where(step.c.channel_id == walk.c.channel_id, position < origin if before else position > origin)
        .order_by(*((step.c.ts.desc(), step.c.id.desc()) if before else (step.c.ts, step.c.id)))
        .limit(1)
        .scalar_subquery()
    )
    near = M.__table__.alias(f"{name}_near")
    return walk.union_all(
        select(walk.c.hit_id, near.c.id, near.c.channel_id, near.c.ts, walk.c.depth + 1)
        .join_from(walk, near, near.c.id == next_id)
        .where(walk.c.depth < bindparam("window", type_=Integer))
    )


def _views(wanted: FromClause) -> Select[tuple]:
    """Message views of `wanted` (hit_id, id) rows, each checked against the viewer's scope once more."""
    return (
        select(
            wanted.c.hit_id,
            M.id,
            M.platform_id,
            models.Channel.platform_id.label("channel_platform_id"),
            models.Channel.name.label("channel_name"),
            models.Member.name.label("sender_name"),
            M.ts,
            M.text,
        )
        .select_from(wanted)
        .join(M, M.id == wanted.c.id)
        .join(models.Channel, models.Channel.id == M.channel_id)
        .join(models.Member, models.Member.id == M.sender_id)
        .where(*scope(drive=False))
    )
