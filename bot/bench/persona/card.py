"""The dataset card of Needle in the Persona."""

from __future__ import annotations

from collections import Counter

from bot.bench.items import BenchItem
from bot.bench.persona.needles import CATEGORIES
from bot.store.world import World


BODY = """\
## How it was built

Appendix D.1.1 of the paper, as code (`bot/bench/persona/`):

1. Conversations come from Synthetic-Persona-Chat (CC BY 4.0), the **test and valid splits** only (1,968
   conversations). A conversation is usable when both speakers have more than 3 lines, every bracket placeholder is
   a speaker-name placeholder (`[User 1's name]`, `[user 2 name]`, `[user 1]` ... are replaced by the member's
   name; conversations with others such as `[city]` are skipped) and no needle item already occurs in it.
   {usable} conversations are usable; each item draws two unused ones (seeded).
2. The first becomes the Alice-Bob DM (User 1 = Alice), the second the Charlie-Dave DM (User 2 = Dave).
3. A needle persona is drawn: a category ({categories} categories, 5 items each) and a kind: **common** (Alice and
   Dave both like the needle item) or **contrasting** (one likes it, the other dislikes it). Each of Alice and Dave
   also states a decoy item of the same category with the same polarity, so neither conversation alone answers the
   question.
4. The needle sentences (templates) are appended to two of Alice's and two of Dave's lines (never the opening
   line). `provenance.needle_lines` records each message id and sentence; a test checks each sentence is present.
5. Bob asks with Charlie (the asking agents of DESIGN.md). Question by kind: "What {{category}} do Alice and Dave
   both enjoy?" / "What {{category}} does Alice enjoy that Dave dislikes?" (or the reverse).

## How it differs from the paper

- The paper sampled from the SPC **train** split, which is missing from our copy; test + valid are used instead.
- The paper had GPT-4 rewrite the dialogues around a free-text persona; here the needle is a templated sentence
  appended to existing lines (no LLM rewriting in this build), with an explicit decoy on each side.
- The paper's sample question was asked by Bob's and Dave's agents in one place and Bob's and Charlie's in
  another; this build uses Bob and Charlie, who each see one needle holder's conversation.
- Metric: precision with the paper's LLM judge prompt (`prompts/bench_judge.yaml`), or, when no judge is configured,
  a concise match: the needle item stated plainly in an answer at most 25 tokens longer than it (pasting lines is
  no answer); EM, token F1 and containment ride along. The score records which.
"""


def persona_card(seed: int, items: list[BenchItem], worlds: dict[str, World], *, usable: int) -> str:
    kinds = Counter(item.provenance["kind"] for item in items)
    messages = sum(w.message_count() for w in worlds.values())
    lines = [
        "# Needle in the Persona (InformativeBench, rebuilt)",
        "",
        f"- Items: {len(items)} (paper: 100); seed {seed}",
        f"- Workspace per item: 4 members (alice, bob, charlie, dave), DMs alice-bob and charlie-dave; {messages} "
        f"messages in all ({messages / len(items):.1f} per item)",
        "- Asking pair: bob asks with charlie",
        "- Metric: judge (precision)",
        "- Kinds: " + ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items())),
        "",
        BODY.format(usable=usable, categories=len(CATEGORIES)),
    ]
    return "\n".join(lines)
