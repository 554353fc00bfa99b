"""The stored approvals of asks' and trades' shares (`approval`): opened once, read, and decided at most once.
`bot.consent.pending.ApprovalStore` waits and decides through these.

    await insert_approval(db, {"id": "appr-1", "ask_id": 7, "member_id": "U1", "status": "pending", ...})
    row = await approval(db, "appr-1")                                   # None when unknown
    won = await settle_approval(db, "appr-1", from_status="pending", to_status="approved", member_id="U1")
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from sqlalchemy import update

from bot.asks.models import Approval
from bot.store.db import Database


async def insert_approval(db: Database, row: Mapping[str, object]) -> None:
    """Store the approval unless one with its id is stored already (a resumed ask opens the same one again)."""
    async with db.session() as session, session.begin():
        await session.execute(db.insert(Approval).values(**row).on_conflict_do_nothing())


async def approval(db: Database, approval_id: str) -> Approval | None:
    async with db.session() as session:
        return await session.get(Approval, approval_id)


async def settle_approval(
    db: Database, approval_id: str, *, from_status: str, to_status: str, member_id: str | None = None
) -> bool:
    """Move the approval from `from_status` to `to_status` (for `member_id` only, when given), stamped now; False
    when it was not in `from_status` or is another member's."""
    conditions = [Approval.id == approval_id, Approval.status == from_status]
    if member_id is not None:
        conditions.append(Approval.member_id == member_id)
    async with db.session() as session, session.begin():
        result = await session.execute(
            update(Approval).where(*conditions).values(status=to_status, decided_at=datetime.now(UTC))
        )
    return result.rowcount == 1
