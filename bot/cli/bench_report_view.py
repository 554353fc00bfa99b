"""Rich tables of a bench report: Table 1 (scores), Table 3 (InfoNav behaviour) and cost per item."""

from __future__ import annotations

from rich.table import Table

from bot.bench.report import Report
from bot.bench.report_tables import TableText, behaviour_text, cost_text, scores_text


def scores_table(report: Report) -> Table:
    return rich_table(scores_text(report))


def behaviour_table(report: Report) -> Table:
    return rich_table(behaviour_text(report))


def cost_table(report: Report) -> Table:
    return rich_table(cost_text(report))


def rich_table(text: TableText) -> Table:
    table = Table(title=text.title, title_justify="left", caption=text.caption)
    for index, header in enumerate(text.headers):
        figure = index >= text.text_columns
        table.add_column(header, justify="right" if figure else "left", style="bold" if index == 0 else None)
    for index, row in enumerate(text.rows):
        table.add_row(*row, style="dim" if index < text.dim_rows else None)
    return table
