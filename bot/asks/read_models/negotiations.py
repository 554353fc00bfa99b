"""Negotiations as the web app shows them, like any conversation: both members, the turns in order, the outcome.

A viewer sees every delivered move and message; the private side of an agent (its reflections, its utility
estimates, its member's private values and costs) only when that agent is the viewer's own. Admins see the moves.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import or_, select

from bot.negotiation.record import NegotiationRecorder
from bot.store import models
from bot.store.db import Database
from bot.store.negotiation_models import Negotiation


LIST_LIMIT = 200


class Reader(Protocol):
    """Who reads: a member of a workspace (the web's signed-in `Identity` is one)."""

    @property
    def workspace_id(self) -> int: ...

    @property
    def member(self) -> str: ...


@dataclass
class NegotiationSummary:
    id: int
    workspace_id: int | None
    participants: list[str]  # handles of member a and member b ("" when not a workspace member)
    agents: list[str]  # the agents' names as the negotiation recorded them
    outcome: str
    status: str
    turns_played: int
    llm_calls: int
    tokens: int
    created_at: datetime


async def negotiations_of(
    db: Database, viewer: Reader | None, *, workspace_id: int | None = None
) -> list[NegotiationSummary]:
    """Newest first: the viewer's own negotiations, or every one (of `workspace_id`) when `viewer` is None (admin
    pages)."""
    stmt = select(Negotiation).order_by(Negotiation.id.desc()).limit(LIST_LIMIT)
    if workspace_id is not None:
        stmt = stmt.where(Negotiation.workspace_id == workspace_id)
    async with db.session() as session:
        if viewer is not None:
            me = await _member_id(session, viewer.workspace_id, viewer.member)
            if me is None:
                return []
            stmt = stmt.where(or_(Negotiation.member_a_id == me, Negotiation.member_b_id == me))
        rows = list((await session.execute(stmt)).scalars())
        handles = await _handles(session, {i for r in rows for i in (r.member_a_id, r.member_b_id) if i})
    return [_summary(r, handles) for r in rows]


async def load_negotiation(db: Database, negotiation_id: int, *, viewer: Reader) -> dict[str, Any] | None:
    """The stored negotiation with its steps, minus the other side's private data; None if there is none."""
    record = await NegotiationRecorder(db).load(negotiation_id)
    if record is None:
        return None
    async with db.session() as session:
        handles = await _handles(session, {i for i in (record["member_a_id"], record["member_b_id"]) if i})
    participants = [handles.get(record["member_a_id"], ""), handles.get(record["member_b_id"], "")]
    own_agents = {
        agent
        for agent, handle in zip((record["agent_a"], record["agent_b"]), participants, strict=True)
        if handle == viewer.member and record["workspace_id"] == viewer.workspace_id
    }
    steps = [s for s in record["steps"] if s["phase"] != "consider" or s["agent"] in own_agents]
    for step in steps:
        if step["agent"] not in own_agents:
            step.update(estimate=None, estimate_target=None, reply="", instruction="")
    return {**record, "steps": steps, "participants": participants, "own_agents": sorted(own_agents)}


async def _member_id(session: Any, workspace_id: int, handle: str) -> int | None:
    stmt = select(models.Member.id).where(models.Member.workspace_id == workspace_id, models.Member.name == handle)
    return (await session.execute(stmt)).scalar_one_or_none()


async def _handles(session: Any, member_ids: set[int]) -> dict[int, str]:
    if not member_ids:
        return {}
    stmt = select(models.Member.id, models.Member.name).where(models.Member.id.in_(member_ids))
    return dict((await session.execute(stmt)).all())


def _summary(row: Negotiation, handles: dict[int, str]) -> NegotiationSummary:
    return NegotiationSummary(
        id=row.id, workspace_id=row.workspace_id,
        participants=[handles.get(row.member_a_id or 0, ""), handles.get(row.member_b_id or 0, "")],
        agents=[row.agent_a, row.agent_b], outcome=row.outcome, status=row.status, turns_played=row.turns_played,
        llm_calls=row.llm_calls, tokens=row.prompt_tokens + row.completion_tokens, created_at=row.created_at,
    )  # fmt: skip
