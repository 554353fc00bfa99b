"""A bench report's tables (`bot.bench.report_tables`) as rich tables for the terminal.

A table wider than the terminal is cut into several, each repeating the name columns (the configuration, and the
sample or dataset when they fit) and holding as many of the other columns as fit: at 80 columns every figure stays
readable instead of each column being squeezed to a few letters.
"""

from __future__ import annotations

from rich.table import Table

from bot.bench.report_tables import TableText


CELL_MAX = 18  # a figure column wider than this wraps its cells at spaces ("33.33% (n=3, m;" / "floor 20.0%)")
NAME_MAX = 24  # the same for the first column (configuration names, floor rows)
PADDING = 3  # a column's border and padding in rich's default box


def rich_table(text: TableText, columns: list[int] | None = None, title: str | None = None) -> Table:
    """The table with the given columns (default: all); the caption goes with the last piece only."""
    shown = columns if columns is not None else list(range(len(text.headers)))
    last = columns is None or shown[-1] == len(text.headers) - 1
    table = Table(title=title or text.title, title_justify="left", caption=text.caption if last else None)
    for index in shown:
        justify = "right" if index >= text.text_columns else "left"
        table.add_column(text.headers[index], justify=justify, style="bold" if index == 0 else None)
    for index, row in enumerate(text.rows):
        table.add_row(*(row[i] for i in shown), style="dim" if index < text.dim_rows else None)
    return table


def column_width(text: TableText, index: int) -> int:
    """The width a column needs to show its cells on one line (at most CELL_MAX) and its header's longest word."""
    cells = [len(row[index]) for row in text.rows] + [len(text.headers[index])]
    words = [len(word) for cell in [text.headers[index], *(row[index] for row in text.rows)] for word in cell.split()]
    return max(min(max(cells), NAME_MAX if index == 0 else CELL_MAX), *words, 1) + PADDING


def rich_tables(text: TableText, width: int) -> list[Table]:
    """The table in as many pieces as it takes to fit `width` terminal columns (one when it fits)."""
    widths = [column_width(text, i) for i in range(len(text.headers))]
    if sum(widths) + 1 <= width or len(widths) <= 2:
        return [rich_table(text)]
    keys = text.text_columns if sum(widths[: text.text_columns]) <= width // 2 else 1  # repeated in every piece
    pieces: list[list[int]] = [[]]
    room = width - 2 - sum(widths[:keys])  # the outer border, and one column of slack
    for index in range(keys, len(widths)):
        if pieces[-1] and sum(widths[i] for i in pieces[-1]) + widths[index] > room:
            pieces.append([])
        pieces[-1].append(index)
    total = len(pieces)
    return [
        rich_table(text, [*range(keys), *piece], f"{text.title} ({number}/{total})")
        for number, piece in enumerate(pieces, 1)
    ]
