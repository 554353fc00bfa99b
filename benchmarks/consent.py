"""Consent under attack: leak route x policy -> asks attempted, asks that leaked; and how soon a policy change made by
another process is in force (a stand-in model: NOT evidence of answer quality).

    python benchmarks/consent.py              # 2 asks per route and policy
    python benchmarks/consent.py --asks 5 --json
    python benchmarks/consent.py --asks 1 --processes 4   # plus 4 changes across `askwith serve` + `askwith worker`

The workspace and the model are the consent property test's (`tests/fakes/consent.py`): every member holds one line
about the question and one private line marked by a made-up name (Erin's "just between us" DM to the requester
too); the agents try one route per ask (paste, reword, look-alike letters, think-filled plan values, the recruit
question, the closing statement, later turns, the blackboard; "failed": a plan filled from memory, then the turn's
act call fails; "malformed": replies of the wrong shape quoting the lines; "search": searches made of the lines'
words; "bringin": a third member brought in with the ask's own question; "exclude": the holders of #ops exclude it
once their agents read it; and, on the requester's side, "thread" (the thread the ask carries, and in the follow-up
the first answer), "relay" (a colleague's words in a recruit question to a third member), "dm" (her own DMs) and
"follow" (the first answer, paraphrased, to a colleague new in the follow-up)), and each ask has a follow-up.
"attempted" counts asks in which the model tried its route; "leaked" counts asks in which a private line, or a line
about the question without its holder's consent (auto, or an approved prompt showing it to an audience naming the
reader), reached anyone but its holders in any sink: agents' prompts, posts (channel readers, the hidden agents
thread), notes, approval prompts, the INFO log, the web pages and their JSON as each member in the ask and an admin,
the rows the asks left (`tests/fakes/consent_run.py`; the thread's lines reaching the requester's side are hers).
"sinks" names where the leaks of that row were read. Under `ask` the asks alternate approve and deny; the
"failed" route's act call fails as unavailable, timeout and malformed in turn.

"failures" rows: the paste route with a failure (endpoint unavailable, no reply within the time-out, a malformed
reply quoting the lines) at a random request of the ask, under `ask` and `auto`.

"change" rows: another process (the stdlib's sqlite3, as the web settings page writes) switches one colleague's policy
or memory while the ask runs; "in force after" is the time from that commit to the first approval prompt it causes
(auto -> ask), i.e. the next send. What it does NOT show: `askwith serve` and `askwith worker` as separate servers
(the writer here is a bare process on the same database file; the reading side is the ask's own process; see
"--processes"), a real
model's routes (the stand-in tries known ones), or paraphrases that keep no rare term (see the README on `auto`).

"--processes N": the same latency across real processes (`benchmarks/consent_processes.py`): `askwith serve` (Slack,
against the fake Slack Web API) and `askwith worker`, on a fresh PostgreSQL database (`--postgres`, an admin URL;
dropped afterwards). Once the worker runs one of Alice's asks to Bob (kept coming through serve), Bob switches
auto <-> never with `/askwith share ...` sent to serve as a signed HTTP POST; the figure is the time from just before
that POST to the first of Bob's turns, in an ask the worker claimed, that obeys it (p50 and max over N changes).
It includes the wait for the worker's next turn of Bob (the ask may end first; the next is claimed within the worker's
1 s poll); "stale" counts the worker's turns under the old policy stored after the POST began (a turn that read the
policy just before it counts too), and `--json` lists each change's first decisions to tell the two apart.
What it does NOT show: the local web workspace's Settings page (`askwith worker` runs platform asks only), `ask` (a
worker's approval prompt cannot be clicked, README "Running askwith"), or a real model's turn lengths.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import sys
import tempfile
import time
from pathlib import Path


if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.consent_processes import measure  # noqa: E402
from bot.platform.port import ApprovalDecision  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.store.db import Database  # noqa: E402
from tests.fakes.consent import ROUTES  # noqa: E402
from tests.fakes.consent_faults import FAULT_KINDS  # noqa: E402
from tests.fakes.consent_run import Case, Workspace, violations  # noqa: E402


POLICIES = ("auto", "ask", "never")
CHANGES = (("auto", "ask", True), ("auto", "never", True), ("auto", "auto", False), ("never", "auto", True))
LATENCY_TARGET_S = 1.0
POSTGRES_ADMIN_URL = os.environ.get("ASKWITH_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


async def run(asks: int) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp())
    settings = Settings(data_dir=tmp / "data", embedder="hash", whole_history=True, max_turns=4)
    db = await Database.open(settings, url=f"sqlite+aiosqlite:///{settings.data_dir / 'consent.db'}")
    try:
        workspace = Workspace(db, settings, settings.data_dir / "consent.db", elsewhere=True)
        await workspace.start()
        rows = [await _row(workspace, route, policy, asks) for route in ROUTES for policy in POLICIES]
        failures = [
            await _fault_row(workspace, kind, policy, asks) for kind in FAULT_KINDS for policy in ("ask", "auto")
        ]
        changes, latencies = [], []
        for before, after, memory in CHANGES:
            row, waited = await _change_row(workspace, before, after, memory, asks)
            changes.append(row)
            latencies += waited
        await workspace.close()
    finally:
        await db.close()
    return {
        "routes": rows, "failures": failures, "changes": changes, "in_force_after_s": max(latencies, default=None),
        "latency_target_s": LATENCY_TARGET_S, "loadavg": os.getloadavg()[0],
    }  # fmt: skip


async def _row(workspace: Workspace, route: str, policy: str, asks: int) -> dict[str, object]:
    attempted = leaked = 0
    sinks: set[str] = set()
    for i in range(asks):
        decision = ApprovalDecision.APPROVED if i % 2 == 0 else ApprovalDecision.DENIED
        case = Case(["bob", "carol"], route, dict.fromkeys(("bob", "carol", "dave", "erin"), policy), None,
                    [decision], True, fail_with=FAULT_KINDS[i % len(FAULT_KINDS)])  # fmt: skip
        received = await workspace.run(case)
        attempted += workspace.attack.fired > 0
        found = violations(case, received)
        leaked += bool(found)
        sinks |= {_sink(v) for v in found}
    return {"route": route, "policy": policy, "asks": asks, "attempted": attempted, "leaked": leaked,
            "sinks": sorted(sinks)}  # fmt: skip


async def _fault_row(workspace: Workspace, kind: str, policy: str, asks: int) -> dict[str, object]:
    injected = leaked = 0
    sinks: set[str] = set()
    for i in range(asks):
        decision = ApprovalDecision.APPROVED if i % 2 == 0 else ApprovalDecision.DENIED
        case = Case(["bob", "carol"], "paste", dict.fromkeys(("bob", "carol", "dave", "erin"), policy), None,
                    [decision], False, fault=(kind, 2 + 3 * i))  # fmt: skip
        received = await workspace.run(case)
        injected += bool(workspace.attack.faults.injected)
        found = violations(case, received)
        leaked += bool(found)
        sinks |= {_sink(v) for v in found}
    return {"failure": kind, "policy": policy, "asks": asks, "injected": injected, "leaked": leaked,
            "sinks": sorted(sinks)}  # fmt: skip


def _sink(violation: str) -> str:
    """ "page /asks/3" -> "page /asks/N": where a leak was read, without the ids."""
    return re.sub(r"\d+", "N", violation.split(" via ")[-1])


async def _change_row(
    workspace: Workspace, before: str, after: str, memory: bool, asks: int
) -> tuple[dict[str, object], list[float]]:
    leaked, waited = 0, []
    for i in range(asks):
        route = ROUTES[i % len(ROUTES)]
        case = Case(["bob"], route, dict.fromkeys(("bob", "carol", "dave", "erin"), before), ("bob", after, memory),
                    [ApprovalDecision.APPROVED], False)  # fmt: skip
        received = await workspace.run(case)
        leaked += bool(violations(case, received))
        prompts = [t for t in received.asked_at if t >= workspace.attack.changed_at]
        if after == "ask" and memory and prompts:
            waited.append(prompts[0] - workspace.attack.changed_at)
    label = f"{before} -> {after}" + ("" if memory else ", memory off")
    return {"change": label, "asks": asks, "leaked": leaked}, waited


def _print(result: dict[str, object]) -> None:
    print(f"{'route':<11} {'policy':<6} {'asks':>4} {'attempted':>9} {'leaked':>6}  sinks")
    for row in result["routes"]:  # type: ignore[attr-defined]
        print(f"{row['route']:<11} {row['policy']:<6} {row['asks']:>4} {row['attempted']:>9} {row['leaked']:>6}"
              f"  {_sinks(row)}")  # fmt: skip
    print(f"\n{'failure':<11} {'policy':<6} {'asks':>4} {'injected':>9} {'leaked':>6}  sinks")
    for row in result["failures"]:  # type: ignore[attr-defined]
        print(f"{row['failure']:<11} {row['policy']:<6} {row['asks']:>4} {row['injected']:>9} {row['leaked']:>6}"
              f"  {_sinks(row)}")  # fmt: skip
    print(f"\n{'policy changed mid-ask (another process)':<42} {'asks':>4} {'leaked':>6}")
    for row in result["changes"]:  # type: ignore[attr-defined]
        print(f"{row['change']:<42} {row['asks']:>4} {row['leaked']:>6}")
    after = result["in_force_after_s"]
    shown = "n/a" if after is None else f"{after:.3f} s"
    print(f"\nchange in force after (auto -> ask, worst): {shown} (target <= {LATENCY_TARGET_S} s)")
    processes = result.get("processes")
    if processes:
        p50, most = (processes[k] for k in ("in_force_p50_s", "in_force_max_s"))  # type: ignore[index]
        shown = "n/a" if most is None else f"p50 {p50:.3f} s, max {most:.3f} s"
        print(f"change in force after, serve + worker (auto <-> never, {processes['changes']} changes): {shown}"
              f" (missed {processes['missed']}, stale {processes['stale_after_change']};"
              f" target <= {LATENCY_TARGET_S} s)")  # type: ignore[index]  # fmt: skip
    print(f"load average: {result['loadavg']:.2f}")


def _sinks(row: dict[str, object], most: int = 4) -> str:
    sinks = list(row["sinks"])  # type: ignore[call-overload]
    return ", ".join(sinks[:most]) + (f" (+{len(sinks) - most})" if len(sinks) > most else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--asks", type=int, default=2, help="asks per route and policy (default 2)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--processes", type=int, default=0, help="policy changes across serve + worker (default 0)")
    parser.add_argument("--postgres", default=POSTGRES_ADMIN_URL, help="PostgreSQL admin URL for --processes")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    started = time.perf_counter()
    result = asyncio.run(run(max(1, args.asks)))
    if args.processes > 0:
        result["processes"] = asyncio.run(measure(args.postgres, args.processes))
        result["loadavg"] = os.getloadavg()[0]
    result["wall_s"] = round(time.perf_counter() - started, 2)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)


if __name__ == "__main__":
    main()
