"""Persisting negotiations, so the transcript viewer (and a replay) can show each one exactly as it ran."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from bot.negotiation.scenario import scenario_to_dict
from bot.negotiation.transcript import NegotiationResult, Phase
from bot.store.db import Database
from bot.store.negotiation_models import Negotiation, NegotiationStep


class ConfirmationStatus:
    NONE = "none"  # nothing was agreed, so there is nothing to confirm
    PENDING = "pending"
    CONFIRMED = "confirmed"
    DECLINED = "declined"


class NegotiationRecorder:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def save(
        self,
        result: NegotiationResult,
        *,
        workspace_id: int | None = None,
        member_ids: tuple[int | None, int | None] = (None, None),
        status: str = ConfirmationStatus.NONE,
    ) -> int:
        async with self.db.session() as session, session.begin():
            row = _negotiation_row(result, workspace_id, member_ids, status)
            session.add(row)
            await session.flush()
            session.add_all(_step_rows(row.id, result))
            return row.id

    async def set_confirmation(self, negotiation_id: int, approvals: tuple[str, str], status: str) -> None:
        async with self.db.session() as session, session.begin():
            row = await session.get(Negotiation, negotiation_id)
            if row is not None:
                row.approval_a, row.approval_b = approvals
                row.status = status

    async def load(self, negotiation_id: int) -> dict[str, Any] | None:
        """A stored negotiation and its steps in order, as plain data for a viewer."""
        async with self.db.session() as session:
            row = await session.get(Negotiation, negotiation_id)
            if row is None:
                return None
            query = select(NegotiationStep).where(NegotiationStep.negotiation_id == negotiation_id)
            steps = (await session.execute(query.order_by(NegotiationStep.seq))).scalars().all()
        return {**_columns(row), "steps": [_columns(step) for step in steps]}


def _negotiation_row(
    result: NegotiationResult, workspace_id: int | None, member_ids: tuple[int | None, int | None], status: str
) -> Negotiation:
    prompt_tokens, completion_tokens = result.tokens()
    return Negotiation(
        workspace_id=workspace_id,
        member_a_id=member_ids[0],
        member_b_id=member_ids[1],
        agent_a=result.scenario.agents[0],
        agent_b=result.scenario.agents[1],
        scenario_id=result.scenario.id,
        setting=result.scenario.setting,
        variant=result.options.variant,
        options=result.options.dict(),
        scenario=scenario_to_dict(result.scenario),
        outcome=result.outcome.value,
        error=result.error,
        turns_played=result.turns_played,
        agreed=result.agreed.dict() if result.agreed else None,
        proposer=result.proposer,
        final_allocation=result.allocation.dict(),
        u_a=result.utilities[0],
        u_b=result.utilities[1],
        social_welfare=result.social_welfare,
        l2_to_pareto=result.l2_to_pareto,
        model=result.model,
        llm_calls=len(result.calls),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        status=status,
        created_at=datetime.now(UTC),
    )


def _step_rows(negotiation_id: int, result: NegotiationResult) -> list[NegotiationStep]:
    rows = []
    for turn in result.turns:
        for index, attempt in enumerate(turn.attempts, start=1):
            rows.append(
                NegotiationStep(
                    negotiation_id=negotiation_id,
                    seq=len(rows),
                    turn=turn.number,
                    agent=turn.agent,
                    phase=turn.phase.value,
                    attempt=index,
                    instruction=turn.instruction if index == 1 else "",
                    reply=attempt.reply,
                    message=attempt.message,
                    move=attempt.move.dict() if attempt.move else None,
                    feedback=attempt.feedback,
                    delivered=turn.phase is Phase.MOVE and turn.delivered and index == len(turn.attempts),
                    estimate=attempt.estimate,
                    estimate_target=attempt.estimate_target,
                    purpose=attempt.call.purpose,
                    model=attempt.call.model,
                    prompt_tokens=attempt.call.prompt_tokens,
                    completion_tokens=attempt.call.completion_tokens,
                    latency_s=attempt.call.latency_s,
                    llm_error=attempt.call.error,
                )
            )
    return rows


def _columns(row: Negotiation | NegotiationStep) -> dict[str, Any]:
    return {column.key: getattr(row, column.key) for column in row.__table__.columns}
