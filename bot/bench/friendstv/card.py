"""The dataset card of FriendsTV."""

from __future__ import annotations

from dataclasses import dataclass

from bot.bench.items import BenchItem
from bot.world import World


@dataclass
class AlignmentStats:
    lines: int = 0  # chat lines (distinct spoken lines) in the episodes with questions
    matched: int = 0  # of those, matched directly to a transcript utterance
    questions: int = 0  # season-1 FriendsQA questions (paraphrases left out)
    with_evidence: int = 0  # questions with at least one answer utterance found in the chat
    pairs: int = 0  # same-scene question pairs considered
    scenes: int = 0  # scenes that gave at least one item


BODY = """\
## How it was built

Appendix D.1.2 of the paper, as code (`bot/bench/friendstv/`):

1. **Workspace.** The season-1 FriendsTV chat database as a workspace (`memory_ingest.sources.friendstv`):
   {members} members, {channels} DM channels, {messages} messages (one per listener of each spoken line; episode k
   on day k). It is written once to `worlds/friendstv.json`; every item replays in it.
2. **Scenes.** Chat lines (messages sharing a timestamp) of episodes {episodes} are aligned in order with the
   scenes of the parsed season-1 transcript (word overlap, short look-ahead): {matched} of {lines} lines match an
   utterance directly ({match_pct:.1f} %); the rest take the scene of the line before.
3. **Questions.** FriendsQA season-1 questions (dev + test files; paraphrased duplicates left out): {questions}.
   A question's evidence is the chat messages of the utterances its answers were marked in (character
   similarity >= 0.75 within the scene). {with_evidence} questions have evidence in the chat; the rest are answered
   only by stage directions, which the chat does not hold.
4. **Pairs.** Every pair of evidenced questions about one scene ({pairs} pairs) is kept when some member sees
   evidence of the first question and none of the second, and another member the reverse (checked from DM channel
   membership). One such asking pair is drawn per question pair (seeded). Items reference their evidence message
   ids (`evidence`, and per part in `provenance.evidence_by_part`).
5. **Question.** Written by a fixed template (no LLM in this build): "{template}". The gold answer lists both
   FriendsQA answers; `gold.parts` keeps every annotated answer text of each part.

## Item count: {items} (paper: 222)

- Only FriendsQA episodes 21-24 of season 1 are available (its train file, episodes 1-20, is missing upstream of
  us), so the question pool is about a sixth of the paper's.
- {no_evidence} questions are answered only in stage directions and have no chat evidence.
- Main characters hear most lines of their scenes, so many same-scene pairs have no member who sees one question's
  evidence without the other's: {asymmetric} of {pairs} pairs pass the asymmetry condition.

## How it differs from the paper

- The paper had GPT-4 write one new question that needs both answers; this build asks both questions in one
  template sentence (an LLM rewrite is optional and off). The gold answer therefore has two parts.
- Metric: precision with the paper's LLM judge prompt (`prompts/bench_judge.yaml`), or, with no judge configured,
  a normalized match (each part's answer must appear in the prediction); the score records which.
"""


def friendstv_card(seed: int, items: list[BenchItem], world: World, stats: AlignmentStats) -> str:
    episodes = sorted({int(item.provenance["scene"].split("_e")[1][:2]) for item in items})
    header = [
        "# FriendsTV (InformativeBench, rebuilt)",
        "",
        f"- Items: {len(items)} (paper: 222); seed {seed}; from {stats.scenes} scenes",
        f"- Workspace: one shared world, {len(world.members)} members",
        "- Asking pair: per item (see the asymmetry rule below)",
        "- Metric: judge (precision)",
        "",
    ]
    body = BODY.format(
        members=len(world.members),
        channels=len(world.channels),
        messages=world.message_count(),
        episodes=", ".join(f"e{e:02d}" for e in episodes) or "none",
        matched=stats.matched,
        lines=stats.lines,
        match_pct=100 * stats.matched / max(stats.lines, 1),
        questions=stats.questions,
        with_evidence=stats.with_evidence,
        no_evidence=stats.questions - stats.with_evidence,
        pairs=stats.pairs,
        asymmetric=len(items),
        items=len(items),
        template="Answer both questions about the same scene of the show: 1) <q1> 2) <q2>",
    )
    return "\n".join(header) + "\n" + body
