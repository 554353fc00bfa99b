"""The Discord half of `benchmarks/platform_scale.py`: visibility events in a large server while interactions come in.

figures = await measure_discord(members=50_000, channels=500, events=100, seed=7)
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import select

from adapters.discord.bot import start_discord
from benchmarks.timing import percentile
from bot.llm.client import LLMClient
from bot.llm.scripted import ScriptedBackend
from bot.llm.standin.model import scripted_model
from bot.memory.access import MemoryAccess
from bot.memory.clear import ClearMemory
from bot.settings import Settings
from bot.store import models
from bot.store.db import Database
from tests.fakes.asks import ask_factory
from tests.fakes.discord_api import FakeDiscordApi
from tests.fakes.discord_gateway import FakeGateway
from tests.fakes.discord_oracle import can_read
from tests.fakes.discord_shapes import READ_MESSAGE_HISTORY, VIEW_CHANNEL
from tests.fakes.scale_worlds import discord_server


TICK_S = 0.005
EVENTS_PER_SECOND = 5
INTERACTIONS = 20
ORACLE_SAMPLE = 300


async def measure_discord(members: int, channels: int, events: int, seed: int) -> dict[str, Any]:
    api, roles = discord_server(members, channels, seed=seed)
    await api.start()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), embedder="hash", discord_bot_token=api.bot_token)
        db = await Database.open(settings)
        llm = LLMClient.from_settings(settings, backend=ScriptedBackend(scripted_model))
        started = time.perf_counter()
        memory = MemoryAccess(clear=ClearMemory(db), fuzzy=None)
        runtime = await start_discord(
            settings, db=db, ask_service=ask_factory(settings, db, llm, memory), worker=False
        )
        figures: dict[str, Any] = {"members": members, "channels": channels, "events": events}
        figures["start_mirror_seconds"] = round(time.perf_counter() - started, 1)
        try:
            gateway = FakeGateway(runtime.client, api)
            gateway.connect()
            touched = await _burst(api, gateway, roles, events, random.Random(seed), figures, runtime.services.live)
            figures["oracle_divergences"] = await _divergences(api, db, touched, random.Random(seed + 1))
        finally:
            await runtime.close()
            await api.stop()
            await db.close()
    return figures


async def _burst(
    api: FakeDiscordApi,
    gateway: FakeGateway,
    roles: list[Any],
    events: int,
    rng: random.Random,
    figures: dict,
    live: Any,  # noqa: ANN401 - the server's GatewaySync
) -> set[str]:
    """`events` member and role events at EVENTS_PER_SECOND, with interactions among them, then an interaction a
    second until every event is applied; a 5 ms timer all along."""
    lateness: list[float] = []
    stop = asyncio.Event()
    ticker = asyncio.create_task(_tick(lateness, stop))
    humans = [m for m in api.world.members if m != api.world.bot_id]
    touched: set[str] = set()
    answers: list[float] = []
    every = max(1, events // INTERACTIONS)
    for n in range(events):
        if n % 10 == 9:  # a role's own permissions change: every holder at once
            role = rng.choice(roles)
            role.permissions ^= VIEW_CHANNEL | READ_MESSAGE_HISTORY
            gateway.role_changed(role)
            touched |= {m for m, held in api.extras.member_roles.items() if role.id in held}
        else:
            member = api.world.members[rng.choice(humans)]
            gateway.set_roles(member, [r.id for r in rng.sample(roles, rng.randint(1, 2))])
            touched.add(member.id)
        if n % every == 0:
            answers.append(await _first_response(api, gateway, rng.choice(humans), rng.choice(humans)))
        await asyncio.sleep(1 / EVENTS_PER_SECOND)
    settled = time.perf_counter()
    applied = asyncio.create_task(_quiet(live))
    while not applied.done():
        answers.append(await _first_response(api, gateway, rng.choice(humans), rng.choice(humans)))
        await asyncio.wait({applied}, timeout=1.0)
    figures["settle_after_burst_seconds"] = round(time.perf_counter() - settled, 1)
    figures["interactions"] = len(answers)
    stop.set()
    await ticker
    figures["loop_stall_p50_ms"] = round(percentile(lateness, 50) * 1000, 1)
    figures["loop_stall_p99_ms"] = round(percentile(lateness, 99) * 1000, 1)
    figures["loop_stall_max_ms"] = round(max(lateness) * 1000, 1)
    figures["first_response_p50_s"] = round(percentile(answers, 50), 3)
    figures["first_response_p99_s"] = round(percentile(answers, 99), 3)
    return touched


async def _quiet(live: Any) -> None:  # noqa: ANN401 - the server's GatewaySync
    """Every event handler finished and every change it asked for applied."""
    while handlers := [t for t in asyncio.all_tasks() if t.get_name().startswith("discord.py: ") and not t.done()]:
        await asyncio.gather(*handlers, return_exceptions=True)
    await live.settled()


async def _tick(lateness: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        due = time.perf_counter() + TICK_S
        await asyncio.sleep(TICK_S)
        lateness.append(max(0.0, time.perf_counter() - due))


async def _first_response(api: FakeDiscordApi, gateway: FakeGateway, asker: str, other: str) -> float:
    """Seconds from an `/ask-with` interaction arriving to its first response (the defer) reaching Discord."""
    started = time.perf_counter()
    world = api.world
    token = gateway.slash(
        "ask-with", world.members[asker], {"question": "when?"}, users={"colleague": world.members[other]}
    )
    await api.wait_for(lambda: [c for c in api.callbacks if c.token == token], timeout=60)
    return time.perf_counter() - started


async def _divergences(api: FakeDiscordApi, db: Database, touched: set[str], rng: random.Random) -> int:
    """Members whose stored channels differ from what Discord's rules (the oracle, not askwith's code) give."""
    humans = sorted(m for m in api.world.members if m != api.world.bot_id)
    checked = sorted(touched | set(rng.sample(humans, min(ORACLE_SAMPLE, len(humans)))))
    channels = list(api.world.channels)
    stored = await _stored_reads(db, checked)
    wrong = 0
    for member in checked:
        expected = {c for c in channels if can_read(api, member, c)}
        wrong += expected != stored.get(member, set())
    return wrong


async def _stored_reads(db: Database, member_ids: list[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    async with db.session() as session:
        for start in range(0, len(member_ids), 500):
            rows = await session.execute(
                select(models.Member.platform_id, models.Channel.platform_id)
                .join(models.Membership, models.Membership.member_id == models.Member.id)
                .join(models.Channel, models.Channel.id == models.Membership.channel_id)
                .where(models.Member.platform_id.in_(member_ids[start : start + 500]))
            )
            for member, channel in rows.all():
                out.setdefault(member, set()).add(channel)
    return out
