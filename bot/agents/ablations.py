"""Switches that turn one mechanism off, for the paper's ablations. Recorded with every ask."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.errors import AskRejectedError
from bot.texts import rejection_texts


NAMES = ("no-infonav", "no-clear-memory", "no-fuzzy-memory", "no-recursion")


@dataclass(frozen=True)
class Ablations:
    infonav: bool = True  # False = plain prompting: no plan, no rationales
    clear_memory: bool = True
    fuzzy_memory: bool = True
    recursion: bool = True

    @classmethod
    def parse(cls, names: Iterable[str] | str) -> Ablations:
        """From names like "no-infonav,no-recursion" (a comma string or a list); unknown names are rejected."""
        if isinstance(names, str):
            names = names.split(",")
        wanted = {n.strip().lower() for n in names if n.strip()}
        for name in wanted - set(NAMES):
            raise AskRejectedError(rejection_texts.unknown_ablation(name, NAMES))
        return cls(
            infonav="no-infonav" not in wanted,
            clear_memory="no-clear-memory" not in wanted,
            fuzzy_memory="no-fuzzy-memory" not in wanted,
            recursion="no-recursion" not in wanted,
        )

    def names(self) -> list[str]:
        switched = {
            "no-infonav": not self.infonav,
            "no-clear-memory": not self.clear_memory,
            "no-fuzzy-memory": not self.fuzzy_memory,
            "no-recursion": not self.recursion,
        }
        return [name for name, off in switched.items() if off]
