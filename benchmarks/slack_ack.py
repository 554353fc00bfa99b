"""Slack acknowledgement times through the real HTTP endpoint of a real `askwith serve` process.

    python benchmarks/slack_ack.py [--json] [--commands 100,500] [--clicks 50]

`askwith serve --scripted` runs with Slack configured against the fake Slack Web API (a local server in this
process). Slack gives an app 3 seconds to acknowledge a request; this measures, from the moment each signed request
is sent until its response arrives:

- N concurrent `/ask-with` commands (each a real ask that then runs in the process),
- M concurrent Approve clicks on real approval prompts, while the fake answers the first `chat.update` with 429
  (`Retry-After: 2`), as Slack does under rate limiting.

Prints p50 / p95 / max per scenario against the target (max < 3 s). The scripted model plays the LLM: figures say
how fast askwith acknowledges, not how well it answers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp  # noqa: E402

from adapters.slack.blocks import APPROVE_ACTION  # noqa: E402
from tests.fakes.asks import QUESTION  # noqa: E402
from tests.fakes.served_slack import ServedSlack  # noqa: E402


TARGET_MAX_S = 3.0
DRAIN_TIMEOUT_S = 300.0
PROMPT_TIMEOUT_S = 120.0


@dataclass
class Scenario:
    name: str
    requests: int
    ok: int
    p50_s: float
    p95_s: float
    max_s: float

    @property
    def meets_target(self) -> bool:
        return self.ok == self.requests and self.max_s < TARGET_MAX_S


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))]


async def _fire(http: aiohttp.ClientSession, url: str, requests: list[tuple[str, dict[str, str]]]) -> list[tuple]:
    """Send every request at once; (seconds to the response, status) for each."""
    gate = asyncio.Event()

    async def one(body: str, headers: dict[str, str]) -> tuple[float, int]:
        await gate.wait()
        started = time.monotonic()
        async with http.post(url, data=body.encode(), headers=headers) as response:
            await response.read()
            return time.monotonic() - started, response.status

    tasks = [asyncio.create_task(one(body, headers)) for body, headers in requests]
    await asyncio.sleep(0.05)  # every task waits at the gate
    gate.set()
    return await asyncio.gather(*tasks)


def _scenario(name: str, results: list[tuple[float, int]]) -> Scenario:
    times = [t for t, _ in results]
    ok = sum(1 for _, status in results if status == 200)
    return Scenario(name, len(results), ok, statistics.median(times), _percentile(times, 95), max(times))


async def _drain(served: ServedSlack) -> None:
    """Wait until the process has run every ask it took (so the next scenario starts from a quiet process)."""
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    while await served.unfinished_asks() and time.monotonic() < deadline:
        await asyncio.sleep(0.5)


async def _wait_for_prompts(served: ServedSlack, count: int) -> list[str]:
    deadline = time.monotonic() + PROMPT_TIMEOUT_S
    while len(ids := served.approval_ids("UERIN")) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    return ids


async def run(commands: list[int], clicks: int) -> list[Scenario]:
    results: list[Scenario] = []
    with tempfile.TemporaryDirectory(prefix="askwith-ack-") as tmp:
        async with ServedSlack(Path(tmp), asks_before_sharing=("UERIN",)) as served:
            events = f"{served.url}/slack/events"
            connector = aiohttp.TCPConnector(limit=0)
            timeout = aiohttp.ClientTimeout(total=120)
            async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
                for n in commands:
                    requests = [served.command("UALICE", f"<@UBOB|bob> {QUESTION}") for _ in range(n)]
                    results.append(_scenario(f"{n} concurrent /ask-with", await _fire(http, events, requests)))
                    print(results[-1], file=sys.stderr)
                    await _drain(served)
                if clicks:
                    # Erin's policy is `ask`: each ask with her waits for her click on a prompt in her DM.
                    asks = [served.command("UALICE", f"<@UERIN|erin> {QUESTION}") for _ in range(clicks)]
                    await _fire(http, events, asks)
                    approval_ids = (await _wait_for_prompts(served, clicks))[:clicks]
                    if not approval_ids:
                        raise RuntimeError(f"no approval prompt appeared: {served.logs()[-2000:]}")
                    served.fake.rate_limit("chat.update", times=1, retry_after=2)
                    requests = [served.click("UERIN", APPROVE_ACTION, a) for a in approval_ids]
                    name = f"{len(requests)} concurrent Approve clicks (one 429)"
                    results.append(_scenario(name, await _fire(http, events, requests)))
                    await _drain(served)
    return results


def _print(results: list[Scenario]) -> None:
    print(f"{'scenario':44} {'ok':>9} {'p50 s':>7} {'p95 s':>7} {'max s':>7}  target max < {TARGET_MAX_S:g} s")
    for r in results:
        verdict = "ok" if r.meets_target else "MISSED"
        print(f"{r.name:44} {r.ok:>4}/{r.requests:<4} {r.p50_s:7.3f} {r.p95_s:7.3f} {r.max_s:7.3f}  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--commands", default="100,500", help="comma list of concurrent command counts")
    parser.add_argument("--clicks", type=int, default=50, help="concurrent Approve clicks (0 = skip)")
    args = parser.parse_args()
    commands = [int(n) for n in args.commands.split(",") if n.strip()]
    results = asyncio.run(run(commands, args.clicks))
    if args.json:
        rows = [{**asdict(r), "meets_target": r.meets_target} for r in results]
        print(json.dumps({"target_max_s": TARGET_MAX_S, "scenarios": rows}, indent=2))
    else:
        _print(results)
    sys.exit(0 if all(r.meets_target for r in results) else 1)


if __name__ == "__main__":
    main()
