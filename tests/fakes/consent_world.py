"""The consent property's workspace (shared by the test, its stand-in model and benchmarks/consent.py).

Every member's DMs hold one line about the question and one private line unrelated to it, each private line marked
by a rare word (a made-up name) that exists nowhere else. Erin's DM to the requester holds one of each ("just
between us": the requester's agent may pass the one about the question on only as Erin's policy allows). #ops
(Carol and Dave) holds a line about the question its members may exclude mid-ask; #hr, which every colleague
excluded, holds one more; #general has every member; an admin (`ADMIN`) took part in nothing.

    world = consent_world()
    reset_members(database_file, {"bob": "ask"})   # every member's memory on, these policies, #ops kept in memory
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from asyncio.subprocess import PIPE
from datetime import UTC, datetime, timedelta

from bot.platform.port import Channel, ChannelKind, Member
from bot.store.world import MemberPolicy, World
from tests.fakes.consent_faults import include_channel


QUESTION = "When is the launch date and where is the launch venue?"
COLLEAGUES = ("bob", "carol", "dave")
MEMBERS = ("alice", *COLLEAGUES, "erin")
GENERAL = "C-general"
ADMIN = "olga"  # an admin of the workspace (ASKWITH_WEB_ADMINS) who took part in nothing; raw prompts off
# marker -> (members whose memory holds it, the line): relevant lines answer the question, private ones do not.
RELEVANT = {
    "14 march": (("bob", "erin"), ("D-bob-erin", "erin", "Heads up: the launch date moved to 14 March.")),
    "pier nine": (("carol", "dave"), ("D-carol-dave", "dave", "The launch venue is Pier Nine, booked today.")),
    # #ops, read by carol's and dave's agents; in the "exclude" route both exclude it once their agent read it.
    "vantor": (("carol", "dave"), ("C-ops", "carol", "Ops note: the launch venue fallback is the Vantor hall.")),
    # Erin to the requester, about the question: passed on by the requester's agent, Erin's consent alone counts.
    "kessler": (("alice", "erin"), ("D-alice-erin", "erin", "Just between us: the launch venue is now Kessler Hall.")),
}
OPS = ("vantor", "C-ops")
PRIVATE = {
    "quorvex": (("bob", "dave"), ("D-bob-dave", "bob", "Between us: my salary is 91,000, interviewing at Quorvex.")),
    "marlowe": (("carol", "erin"), ("D-carol-erin", "carol", "Keep quiet: my divorce hearing with Marlowe is on.")),
    "halvorsen": (("dave", "erin"), ("D-dave-erin", "dave", "Confidential: the Halvorsen audit found gaps.")),
    "brennick": (("bob", "carol"), ("D-bob-carol", "carol", "My doctor said the Brennick biopsy results are due.")),
    # Erin (whatever her policy) to the requester: her words may reach no one else through alice's agent.
    "ostrava": (("alice", "erin"), ("D-alice-erin", "erin", "Just between us: the Ostrava office closes in May.")),
}
# The thread an "ask about this thread" was used on: alice saw it (it is hers to use); it quotes a private line of
# bob's and dave's DM and the launch-date line of bob's and erin's DM, neither of which the others may get through it.
THREAD = (
    f"bob: {PRIVATE['quorvex'][1][2]}",
    f"alice: noted. {RELEVANT['14 march'][1][2]}",
)
EXCLUDED = "zanzibar"  # in #hr, which every member but alice keeps out of memory: never read by anyone


def consent_world() -> World:
    world = World(id="consent", name="consent")
    excluded = MemberPolicy(excluded_channels=["C-hr"])
    for handle in MEMBERS:
        world.add_member(Member(handle, handle, handle.title()), MemberPolicy() if handle == "alice" else excluded)
    world.add_member(Member(ADMIN, ADMIN, ADMIN.title()), MemberPolicy())
    world.add_channel(Channel("C-hr", "hr", ChannelKind.PRIVATE, COLLEAGUES + ("erin",)))
    world.add_channel(Channel(OPS[1], "ops", ChannelKind.PRIVATE, RELEVANT[OPS[0]][0]))
    world.add_channel(Channel(GENERAL, "general", ChannelKind.PUBLIC, MEMBERS))  # where channel asks answer
    moment = iter(datetime(2026, 3, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=m) for m in range(100))
    for other in COLLEAGUES:
        world.add_message(
            world.dm("alice", other).id, "alice", f"Hi {other.title()}, are we on track?", ts=next(moment)
        )
    for _, (_, (channel, sender, text)) in [*RELEVANT.items(), *PRIVATE.items()]:
        if channel.startswith("D-"):
            channel = world.dm(*channel.split("-")[1:]).id
        world.add_message(channel, sender, text, ts=next(moment))
    world.add_message("C-hr", "dave", "The Initech merger closes in Zanzibar next week.", ts=next(moment))
    return world


def set_member(database: str, member: str, share: str, opted_in: bool) -> None:
    """A member's settings written the way another process (the web settings page) would."""
    with sqlite3.connect(database, timeout=30) as conn:
        conn.execute("UPDATE member SET share_policy = ?, opted_in = ? WHERE name = ?", (share, opted_in, member))


def reset_members(database: str, policies: dict[str, str]) -> None:
    """Every member back to memory on, with these share policies (auto when not given), #ops kept in memory."""
    for member in MEMBERS:
        set_member(database, member, policies.get(member, "auto"), True)
    include_channel(database, RELEVANT[OPS[0]][0], OPS[1])


class Elsewhere:
    """Members' settings written from a separate process (the stdlib's sqlite3 only: nothing of askwith runs there),
    its own connection committing each change before it answers. One process serves every change of a run: starting
    an interpreter per change cost more than the change itself.

        elsewhere = Elsewhere(database)
        await elsewhere.set_member("bob", "never", True)   # committed by the other process when this returns
        await elsewhere.close()
    """

    CODE = (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], timeout=30)\n"
        "for line in sys.stdin:\n"
        "    member, share, opted_in = line.split()\n"
        "    update = 'UPDATE member SET share_policy=?, opted_in=? WHERE name=?'\n"
        "    c.execute(update, (share, opted_in == '1', member))\n"
        "    c.commit()\n"
        "    print('ok', flush=True)\n"
    )

    def __init__(self, database: str) -> None:
        self.database = database
        self.process: asyncio.subprocess.Process | None = None

    async def set_member(self, member: str, share: str, opted_in: bool) -> None:
        if self.process is None or self.process.returncode is not None:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-c", self.CODE, self.database, stdin=PIPE, stdout=PIPE
            )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{member} {share} {'1' if opted_in else '0'}\n".encode())
        await self.process.stdin.drain()
        if await asyncio.wait_for(self.process.stdout.readline(), timeout=60) != b"ok\n":
            raise RuntimeError("the policy change in another process failed")

    async def close(self) -> None:
        if self.process is not None and self.process.returncode is None:
            assert self.process.stdin is not None
            self.process.stdin.close()  # its loop ends, and so does the process
            await asyncio.wait_for(self.process.wait(), timeout=60)
        self.process = None
