"""A bench report's tables (`bot.bench.report_tables`) as rich tables for the terminal."""

from __future__ import annotations

from rich.table import Table

from bot.bench.report_tables import TableText


def rich_table(text: TableText) -> Table:
    table = Table(title=text.title, title_justify="left", caption=text.caption)
    for index, header in enumerate(text.headers):
        figure = index >= text.text_columns
        table.add_column(header, justify="right" if figure else "left", style="bold" if index == 0 else None)
    for index, row in enumerate(text.rows):
        table.add_row(*row, style="dim" if index < text.dim_rows else None)
    return table
