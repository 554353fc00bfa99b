"""What an ask is doing now, as the agents report it: a stage and whom it concerns.

The agents call `ctx.report(Stage.SEARCHING, "alice")` at a few fixed points (no LLM call, no waiting); the ask
service stores the latest stage and tells in-process subscribers (`bot.asks.progress`).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum


class Stage(StrEnum):
    QUEUED = "queued"  # submitted, no worker has it yet
    PLANNING = "planning"  # a worker took it; the agents are setting out what they need to know
    SEARCHING = "searching"  # detail: the member whose memory an agent is searching
    TALKING = "talking"  # detail: the colleague whose agent the requester's agent is talking with
    BRINGING_IN = "bringing_in"  # detail: the member whose agent was brought into a sub-conversation
    WAITING = "waiting"  # detail: the member whose approval an agent waits for
    AGREEING = "agreeing"  # the consensus call: one answer with its sources
    DONE = "done"
    UNSUPPORTED = "unsupported"
    FAILED = "failed"
    CANCELLED = "cancelled"


FINAL_STAGES = frozenset({Stage.DONE, Stage.UNSUPPORTED, Stage.FAILED, Stage.CANCELLED})

ProgressSink = Callable[[Stage, str], None]  # (stage, detail: a handle or ""); must not block
