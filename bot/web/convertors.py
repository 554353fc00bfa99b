"""Path convertors of the web app's routes, registered with Starlette on import (before any route is built)."""

from __future__ import annotations

from starlette.convertors import Convertor, register_url_convertor


class RecordIdConvertor(Convertor[int]):
    """`{ask_id:record_id}`: a database id, at most 18 digits, so it always fits the store's 64-bit integer keys (a
    longer number matches no route: 404, never an overflow deep in the database driver)."""

    regex = "[0-9]{1,18}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(int(value))


register_url_convertor("record_id", RecordIdConvertor())
