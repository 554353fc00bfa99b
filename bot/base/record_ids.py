"""Database ids as they come back from a button or a link: digits only, at most 18 of them (they always fit the
store's 64-bit integer keys), so a forged value is refused where it arrives, never overflowing in a database driver.

    record_id("42")        # 42
    record_id("abc")       # None
    record_id("9" * 30)    # None
"""

from __future__ import annotations

import re


RECORD_ID_PATTERN = "[0-9]{1,18}"
_RECORD_ID = re.compile(RECORD_ID_PATTERN)


def record_id(value: object) -> int | None:
    """The id `value` spells, or None when it is not one."""
    if not isinstance(value, str) or not _RECORD_ID.fullmatch(value):
        return None
    return int(value)
