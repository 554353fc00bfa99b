"""One budget per Slack method and workspace, shared by every caller: paced methods wait their turn, a Retry-After
met by one caller holds the others, other workspaces and methods are not held, and pages are capped as the install
type allows."""

from __future__ import annotations

import asyncio

import pytest

from adapters.slack.rate_limits import LIMITED_INTERVAL_S, InstallLimits, MethodBudgets
from bot.errors import PlatformRateLimitedError
from bot.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


async def test_callers_of_one_method_in_one_workspace_share_its_pace() -> None:
    clock = Clock()
    budgets = MethodBudgets(clock=lambda: clock.now, sleep=clock.sleep)
    waits = await asyncio.gather(*(budgets.acquire("T1", "conversations.history", 60.0) for _ in range(3)))
    assert sorted(waits) == [0.0, 60.0, 60.0] and clock.now == 220.0
    assert await budgets.acquire("T2", "conversations.history", 60.0) == 0.0  # another workspace
    assert await budgets.acquire("T1", "conversations.replies", 60.0) == 0.0  # another method


async def test_a_retry_after_holds_every_caller_and_a_long_one_is_not_waited_unpaced() -> None:
    clock = Clock()
    budgets = MethodBudgets(clock=lambda: clock.now, sleep=clock.sleep)
    budgets.retry_after("T1", "chat.update", 5.0)
    assert await budgets.acquire("T1", "chat.update") == 5.0
    budgets.retry_after("T1", "users.list", 600.0)
    with pytest.raises(PlatformRateLimitedError):
        await budgets.acquire("T1", "users.list", max_wait_s=30.0)
    assert await budgets.acquire("T1", "users.list") == 600.0  # paced callers wait however long


def test_pages_are_capped_for_a_non_marketplace_distributed_app_only(settings: Settings) -> None:
    limited = InstallLimits.for_settings(settings.replace(slack_distribution="oauth"))
    assert limited.params("conversations.history", {"limit": 200})["limit"] == 15
    assert limited.params("users.list", {"limit": 200})["limit"] == 200
    assert limited.interval("conversations.replies") == LIMITED_INTERVAL_S
    marketplace = InstallLimits.for_settings(settings.replace(slack_distribution="oauth", slack_marketplace=True))
    internal = InstallLimits.for_settings(settings)
    assert (
        marketplace.params("conversations.history", {"limit": 200})["limit"]
        == 200
        == internal.params("conversations.history", {"limit": 200})["limit"]
    )
    assert not internal.interval("conversations.history")
