"""The dataset card of a Schedule level."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from bot.bench.items import BenchItem
from bot.store.world import World


if TYPE_CHECKING:
    from bot.bench.schedule.dataset import Level


HOW_BUILT = """\
## How it was built

Appendix D.2 of the paper, as code (`bot/bench/schedule/`):

- **Pools.** {singles} single-person activities (a duration each), {groups} group activities (a duration and a
  participant count), routines with allowed start ranges (breakfast 6:30-9:00, lunch 11:00-13:30, dinner
  17:30-20:00) and sleep (from midnight until 6:00-8:00, and from 21:00-23:30 until midnight).
- **People.** Each person has a random preference vector over all pool activities and a 48-slot (half-hour) time
  vector.
- **Order.** {n_groups} group activities are drawn and placed first (start between 8:00 and 21:00, participants
  drawn from those who like it and are free), then routines, then singles: two pointers walk each free stretch and
  lay in liked, unused singles that fit (each free slot starts one with probability {fill}).
- **Dialogue.** Each chat is rendered from the schedules by templates (several phrasings, chosen by the seeded
  random generator; no LLM paraphrase in this build). Each person states every activity of theirs once per chat,
  first person, with start and end times. A group activity names its other participants only when the listener
  takes part too (the D.2 naming rule). The generator checks that every activity the answer depends on is stated,
  with its times, in a chat one of the asking members can see.
- **Gold answer** by algorithm: {gold}
- **Verification.** `bot.bench.schedule.verify` reads the schedules back out of the dialogue text, checks them
  against the recorded ones and recomputes every gold answer by another algorithm; the test suite requires 100 %
  agreement.
"""

GOLD = {
    "easy": "A = Alice's and D = Dave's activities (sleep excluded) form one set S of half-open slot intervals; "
    "the answer is the least number of activities to delete from S so no two remaining ones overlap, i.e. |S| "
    "minus the largest set of pairwise non-overlapping intervals (earliest-end greedy). Days with no conflict are "
    "re-drawn. Alice and Dave never share a group activity in Easy, so a shared event never counts as a conflict.",
    "medium": "the name(s) of the activity with the most slots over all six schedules, sleep excluded (sleep would "
    "always win); ties give several names. Scored by F1 over normalized names.",
    "hard": "every maximal span of half-hour slots in which none of the six has an activity (sleep included), "
    "written like `9:00-11:00`. Days with no common free time are re-drawn. Scored by IoU over slots.",
}

DIFFERENCES = """\
## How it differs from the paper

- The paper's dialogues were written by GPT-4 from the schedules; here they come from templates (an LLM paraphrase
  is optional and off). The dialogues are therefore more regular than the paper's.
- The paper's pools, preference probabilities and number of group activities were not published; the values here
  are ours (see `bot/bench/schedule/pools.py`).
- Medium excludes sleep and says so in the question; Easy excludes sleep and says so.
- One workspace per item (the paper stored one database per item too): members `alice`, `bob`, `charlie`, `dave`,
  `emily`, `franklin` are reused in every item's own workspace.
"""


VARIANT_LABELS = {
    "paper": "paper (default): every activity has its pool length, as appendix D.2",
    "per-person": "per-person lengths (not the paper's): each person draws each activity's length (1-6 half hours), "
    "so the longest activity cannot be guessed from the pool",
}


def schedule_card(level: Level, seed: int, items: list[BenchItem], worlds: dict[str, World]) -> str:
    messages = sum(w.message_count() for w in worlds.values())
    chats = ", ".join(f"{a}-{b}" for a, b in level.chats)
    lines = [
        f"# Schedule {level.name.capitalize()} (InformativeBench, rebuilt)",
        "",
        f"- Items: {len(items)} (paper: 30); seed {seed}",
        f"- Variant: {VARIANT_LABELS[level.spec.variant]}",
        f"- Workspace per item: {len(level.spec.people)} members, DM chats {chats}; "
        f"{messages} messages in all ({messages / len(items):.1f} per item)",
        f"- Asking pair: {items[0].asking[0]} asks with {items[0].asking[1]}",
        f"- Metric: {level.metric}",
        f"- Question: {level.question}",
        f"- Gold answers: {_gold_summary(level.name, items)}",
        "",
        HOW_BUILT.format(
            singles=16, groups=12, n_groups=level.spec.groups, fill=level.spec.fill, gold=GOLD[level.name]
        ),
        DIFFERENCES,
    ]
    return "\n".join(lines)


def _gold_summary(level: str, items: list[BenchItem]) -> str:
    if level == "easy":
        counts = Counter(item.gold["count"] for item in items)
        return "deletions " + ", ".join(f"{k}: {v} items" for k, v in sorted(counts.items()))
    if level == "medium":
        ties = Counter(len(item.gold["activities"]) for item in items)
        return "names per answer " + ", ".join(f"{k}: {v} items" for k, v in sorted(ties.items()))
    spans = Counter(len(item.gold["spans"]) for item in items)
    return "free spans per answer " + ", ".join(f"{k}: {v} items" for k, v in sorted(spans.items()))
