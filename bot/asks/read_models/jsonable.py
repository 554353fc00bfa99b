"""Views as JSON bodies: a page's JSON is its view, field for field (dataclasses, enums, datetimes, plain data).

JSONResponse(jsonable(view))   # {"ask": {...}, "conversations": [...], ...}
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from enum import Enum
from typing import Any


def jsonable(value: Any) -> Any:
    """`value` as plain JSON data. Only a view's own fields are walked: a view holds nothing it may not show."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return jsonable(value.value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"{type(value).__name__} is not part of a view")
