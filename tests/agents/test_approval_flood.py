"""One member cannot flood a colleague with approval prompts by starting asks in a loop.

Red team, before: 60 asks from alice naming a `share=ask` colleague sent bob 60 approval prompts in a second. After:
a requester's asks prompt one member `BURST` times at once, then one more every `REFILL_S` seconds; an ask over the
limit goes on without that member's facts (the share counts as not approved: `unreachable`), and nobody else's
prompts are affected.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from bot.asks.service import AskRequest
from bot.platform.port import ApprovalDecision, ApprovalRequest, SharePolicy
from bot.settings import Settings
from bot.store.db import Database
from bot.store.world import MemberPolicy
from tests.fakes.asks import QUESTION, build, two_fact_world


ASKS = 40  # the red team sent 60
AT_MOST = 20  # bot.consent.prompt_limits.BURST


async def test_many_asks_at_once_prompt_a_colleague_at_most_a_burst(db: Database, settings: Settings) -> None:
    prompted: Counter[str] = Counter()

    async def bob_denies(request: ApprovalRequest) -> ApprovalDecision:
        prompted[request.member_id] += 1
        return ApprovalDecision.DENIED

    world = two_fact_world(policies={"bob": MemberPolicy(share=SharePolicy.ASK)})
    h = await build(db, world, settings=settings, approvals=bob_denies)
    outcomes = await asyncio.gather(*(h.service.ask(AskRequest("alice", ["bob"], QUESTION)) for _ in range(ASKS)))
    assert all(o.answer is not None for o in outcomes)  # every ask still ends with an answer
    assert 0 < prompted["bob"] <= AT_MOST, prompted


def test_the_bucket_refills_and_a_resumed_ask_is_not_counted_twice() -> None:
    from bot.consent.prompt_limits import BURST, ApprovalLimits

    assert BURST == AT_MOST
    now = [0.0]
    limits = ApprovalLimits(burst=2, refill_s=10.0, clock=lambda: now[0])
    assert limits.admit("alice", "UBOB", "a1") and limits.admit("alice", "UBOB", "a2")
    assert not limits.admit("alice", "UBOB", "a3")
    assert limits.admit("alice", "UBOB", "a1")  # the same question asked again by a resumed ask
    assert limits.admit("carol", "UBOB", "c1")  # another requester has a bucket of their own
    now[0] = 10.0
    assert limits.admit("alice", "UBOB", "a3") and not limits.admit("alice", "UBOB", "a4")
