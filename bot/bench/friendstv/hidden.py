"""The "find who knows" variant of FriendsTV: questions that do not name who holds a part's answer.

By default the scene anchor lists the scene's speakers and the FriendsQA question often names the character who said
or heard the answer, so for a part the asking pair cannot see, "find who knows" becomes "ask the person named". In
this variant the people to find (every holder of a part's answer lines outside the asking pair, for each part the
pair cannot see itself) are named nowhere: the anchor leaves out their names and any title or place holding one, and
each mention in a question becomes a neutral description ("someone", "someone else", ...), the same one for the same
person throughout the item.

    hidden = people_to_find(asked)                               # ("monica",)
    mask = NameMask(hidden, full_names, text)                    # full_names: "Monica Geller", ...; text: questions
    mask("Why does Joey think there is something wrong with Monica's date?")
    # "Why does Joey think there is something wrong with someone's date?"
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.bench.friendstv.anchor import short_name
from bot.bench.friendstv.pairing import Asked


NAMED, HIDDEN = "named", "hidden"
ANCHORS = (NAMED, HIDDEN)
VARIANT = "find-who-knows"  # the dataset variant (`askwith bench generate --variant`) built with anchor="hidden"
DESCRIPTIONS = ("someone", "someone else", "a third person", "a fourth person")
OTHER = "another person"  # beyond the descriptions above
_SENTENCE_START = re.compile(r"(^|[.?!:]\s+)$")


def people_to_find(asked: Asked) -> tuple[str, ...]:
    """Member ids holding a part's answer that the asking pair does not see itself, in a fixed order."""
    pair = set(asked.asking)
    return tuple(sorted({m for part in asked.parts if part.hops >= 1 for m in part.reach - pair}))


def name_forms(member: str, full_names: Iterable[str]) -> list[str]:
    """How a member may be written: the FriendsQA full names whose short form is theirs ("Monica Geller"), and the
    short form itself ("Monica"; "Mrs. Geller" stays whole). Longest first, so a full name is replaced whole."""
    short = short_name(member.title())
    forms = {short} | {name for name in full_names if short_name(name).lower() == short.lower()}
    return sorted(forms, key=lambda f: (-len(f), f))


def _first_mention(member: str, full_names: list[str], text: str) -> int:
    found = [m.start() for f in name_forms(member, full_names) if (m := _mention(f).search(text))]
    return min(found, default=len(text))


def _mention(form: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(form)}(?!\w)", re.IGNORECASE)


class NameMask:
    """Replaces every mention of the hidden members by their description (possessives kept: "Monica's" ->
    "someone's"); the text of anyone else is left as it was."""

    def __init__(self, hidden: Iterable[str], full_names: Iterable[str], text: str = "") -> None:
        """`text`: the item's questions in reading order; the first person mentioned becomes "someone"."""
        full = list(full_names)
        self.descriptions: dict[str, str] = {}
        patterns = []
        for index, member in enumerate(sorted(hidden, key=lambda m: _first_mention(m, full, text))):
            self.descriptions[member] = DESCRIPTIONS[index] if index < len(DESCRIPTIONS) else OTHER
            for form in name_forms(member, full):
                patterns.append((form, member))
        self.member_of = {form.lower(): member for form, member in patterns}
        alternatives = "|".join(re.escape(form) for form, _ in sorted(patterns, key=lambda p: -len(p[0])))
        self.pattern = re.compile(rf"(?<!\w)({alternatives})(['\u2019]s)?(?!\w)", re.IGNORECASE) if patterns else None

    @property
    def forms(self) -> list[str]:
        return list(self.member_of)

    def __call__(self, text: str) -> str:
        if self.pattern is None:
            return text
        return self.pattern.sub(lambda m: self._describe(m, text), text)

    def _describe(self, match: re.Match[str], text: str) -> str:
        description = self.descriptions[self.member_of[match.group(1).lower()]]
        if _SENTENCE_START.search(text[: match.start()]):
            description = description[0].upper() + description[1:]
        return description + ("'s" if match.group(2) else "")
