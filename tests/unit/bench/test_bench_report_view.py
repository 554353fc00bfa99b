"""`askwith bench report` in a narrow terminal: wide tables are cut into pieces that fit, every figure kept whole."""

from __future__ import annotations

from rich.console import Console

from bot.bench.report_tables import TableText
from bot.cli.bench_report_view import rich_tables


DATASETS = ["schedule-easy", "schedule-medium", "schedule-hard", "np", "friendstv"]
TABLE = TableText(
    "Table 1",
    ["configuration", "options", "judge", *DATASETS],
    [
        ["gpt-4o-mini no-infonav", "-", "rules", *(f"{i}3.33% (n=3, m; floor 20.0%)" for i in range(5))],
        ["floor: constant most-frequent answer", "", "", *(f"1{i}.00% (n=64)" for i in range(5))],
    ],
    "caption",
    text_columns=3,
)


def _printed(width: int) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for table in rich_tables(TABLE, width):
        console.print(table)
    return console.export_text()


def test_at_80_columns_every_figure_and_name_is_shown_whole() -> None:
    text = _printed(80)
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    flat = " ".join(text.split())
    for i, dataset in enumerate(DATASETS):
        assert dataset in flat and f"1{i}.00% (n=64)" in flat
    assert text.count("gpt-4o-mini no-infonav") == len(rich_tables(TABLE, 80)) > 1  # names repeated per piece


def test_a_wide_terminal_gets_one_table() -> None:
    assert len(rich_tables(TABLE, 250)) == 1
    assert "…" not in _printed(250)
