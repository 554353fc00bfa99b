"""An exclusion made mid-ask applies at once: what an agent read from a channel its member has since kept out of
memory is forgotten before anything else leaves it.

The outbox reads the member's profile, exclusions included, at the start of every turn and at every send
(`Outbox.profile`, a change made in any process applies). The lines of a channel excluded since they were read are
dropped from the agent's notebook and from what it released to consensus, from the ask's cached searches of that
member (`MemoryTools.forget`), and the plan values resting only on them go back to unknown. With a private model the
notebook holds its notes on messages, named by message id: those whose message the member can no longer see go too.

Words already written may rest on a dropped line in any wording (a model pastes or rewords what it was shown). So
when a dropped line was read or shown to the model since the settings were last read, the send about to happen is
held (`MemberProfile.withdrawn`: nothing of it leaves, and the turn's record keeps none of its evidence); the next
turn starts from the notebook without those lines.

    profile = await settle(agent, await roster.profile(agent.handle))  # what `Outbox.profile` does
    profile.withdrawn  # True: this send is held
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from bot.agents.evidence import EvidenceLine
from bot.agents.memory_tools import in_channels
from bot.agents.notebook import ids_in
from bot.agents.plan import Plan, Status
from bot.agents.roster import MemberProfile


if TYPE_CHECKING:
    from bot.agents.agent import Agent


async def settle(agent: Agent, profile: MemberProfile) -> MemberProfile:
    """Forget what `profile`'s exclusions now keep out; the profile to send under (withdrawn: hold this send)."""
    notebook = agent.notebook
    hidden = await _hidden_notes(agent, profile) if profile.excluded - notebook.excluded else set()
    notebook.excluded = profile.excluded

    def gone(line: EvidenceLine) -> bool:
        return in_channels(line, profile.excluded) or line.id in hidden

    dropped, pending = notebook.withdraw(gone)
    agent.tools.forget(profile.excluded)
    if dropped:
        _unfill(agent.plan, {line.id for line in dropped}, set(notebook.lines))
    return replace(profile, withdrawn=True) if pending else profile


async def _hidden_notes(agent: Agent, profile: MemberProfile) -> set[str]:
    """The private model's notes (named by the message they are about) whose message the member no longer sees; all
    of them when visibility cannot be read."""
    notes = [line.id for line in agent.notebook.lines.values() if line.via == "facts"]
    history = agent.tools.memory.history
    if not notes:
        return set()
    if history is None:
        return set(notes)
    ids = {note: note.split("#", 1)[0] for note in notes}  # "m12#3": the third note on m12
    seen = await history.visible_ids(profile.viewer, sorted(set(ids.values())))
    return {note for note, message in ids.items() if message not in seen}


def _unfill(plan: Plan, dropped: set[str], kept: set[str]) -> None:
    """Values whose every cited line was dropped rest on nothing the member still lets the agent read."""
    for rationale in plan.known:
        cited = set(ids_in(rationale.source, dropped | kept))
        if cited & dropped and not cited & kept:
            rationale.status, rationale.value, rationale.source = Status.UNKNOWN, "", ""
