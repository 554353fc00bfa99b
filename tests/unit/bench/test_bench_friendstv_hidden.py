"""FriendsTV's "find who knows" variant: no question or anchor names the people who hold the answers, and the
default items are unchanged (the dataset tests need ASKWITH_BENCH_DATA_DIR)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from bot.bench.friendstv.anchor import short_name
from bot.bench.friendstv.hidden import VARIANT, NameMask
from bot.bench.generate import generate
from bot.bench.items import ITEMS, MANIFEST, BenchItem, load_items
from bot.settings import Settings


# sha256 of items.jsonl of `askwith bench generate --dataset friendstv --seed 0` (offline template), taken before the
# variant existed: the default must stay byte-identical.
DEFAULT_ITEMS_SHA256 = "9fbb19e4ec9a35fce0da13004cf1402c14b729859bca407a66fcce4faac9645f"


def test_the_mask_describes_each_hidden_person_and_keeps_everyone_else() -> None:
    mask = NameMask(["rachel", "monica"], ["Monica Geller", "Ross Geller"], "Why did Monica and Rachel fight?")

    assert mask("Why did Monica and Rachel fight?") == "Why did someone and someone else fight?"
    assert mask("Monica Geller's date with Ross") == "Someone's date with Ross"
    assert mask("What did RACHEL say? monica left.") == "What did someone else say? Someone left."
    assert mask("Rachelle and Monicas stay") == "Rachelle and Monicas stay"  # other words are not names
    assert NameMask([], [])("Monica") == "Monica"


def mentions(text: str, member: str) -> bool:
    first = short_name(member.title())
    return re.search(rf"(?<!\w){re.escape(first)}(?!\w)", text, re.IGNORECASE) is not None


@pytest.fixture(scope="module")
def variants(bench_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    settings = Settings(bench_data_dir=bench_data_dir)
    dirs = {}
    for variant in ("paper", VARIANT):
        dirs[variant] = tmp_path_factory.mktemp(variant)
        generate("friendstv", 0, dirs[variant], settings, variant=variant)
    return dirs


def test_the_default_items_are_unchanged(variants: dict[str, Path]) -> None:
    assert hashlib.sha256((variants["paper"] / ITEMS).read_bytes()).hexdigest() == DEFAULT_ITEMS_SHA256
    assert "variant" not in json.loads((variants["paper"] / MANIFEST).read_text())


def to_find(item: BenchItem) -> set[str]:
    """Holders of a part's answer lines the asking pair does not see itself (from the gold, not the generator)."""
    return {h for p in item.gold["parts"] if p["hops"] >= 1 for h in p["holders"]} - set(item.asking)


def test_no_question_or_anchor_names_a_holder_the_pair_must_find(variants: dict[str, Path]) -> None:
    items = load_items(variants[VARIANT])
    assert json.loads((variants[VARIANT] / MANIFEST).read_text())["variant"] == VARIANT
    assert sum(bool(to_find(item)) for item in items) > len(items) / 2
    for item in items:
        texts = [
            item.question,
            *(p["question"] for p in item.gold["parts"]),
            *(p["scene_anchor"] for p in item.gold["parts"]),
        ]
        named = [(m, t) for m in to_find(item) for t in texts if mentions(t, m)]
        assert not named, (item.id, named)


def test_the_variant_asks_the_same_items_of_the_same_pairs(variants: dict[str, Path]) -> None:
    default, hidden = load_items(variants["paper"]), load_items(variants[VARIANT])
    assert [(i.id, i.asking, i.gold["answer"], i.evidence) for i in default] == [
        (i.id, i.asking, i.gold["answer"], i.evidence) for i in hidden
    ]
    # The default named them: the variant changed what it had to (the check above can fail).
    assert sum(any(mentions(i.question, m) for m in to_find(i)) for i in default) > len(default) / 2
    changed = [d.id for d, h in zip(default, hidden, strict=True) if d.question != h.question]
    assert len(changed) == sum(bool(to_find(d)) and any(mentions(d.question, m) for m in to_find(d)) for d in default)
