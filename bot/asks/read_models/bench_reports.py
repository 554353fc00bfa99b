"""Bench reports for the admin page: the folders under the reports directory that hold a `report.json` (as
`askwith bench report` writes them), their three tables and their PNG plots.

Blocking file reads: call these through `asyncio.to_thread`. A report or plot is only ever opened by a name taken
from the listing itself, so a crafted name (`../..`, an absolute path, a symlink out) finds nothing.

    reports = find_reports(root)                      # newest first
    shown = show_report(root, reports[0])             # tables (the report module's cells), plots, or an error
    path = plot_file(root, reports[0].name, "scores.png")
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bot.bench.report import report_from_dict
from bot.bench.report_tables import TableText, report_tables


REPORT_FILE = "report.json"
PATTERNS = (REPORT_FILE, f"*/{REPORT_FILE}", f"*/*/{REPORT_FILE}")  # the directory itself and two levels down


@dataclass(frozen=True)
class ReportEntry:
    name: str  # the folder relative to the reports directory, "/"-separated; "." for the directory itself
    modified: datetime
    plots: tuple[str, ...]  # PNG file names in the folder


@dataclass(frozen=True)
class ShownReport:
    entry: ReportEntry
    tables: list[TableText] = field(default_factory=list)
    scripted: bool = False
    error: str | None = None  # the report.json could not be read as a report


def find_reports(root: Path) -> list[ReportEntry]:
    if not root.is_dir():
        return []
    base = root.resolve()
    entries = [_entry(base, path.parent) for pattern in PATTERNS for path in root.glob(pattern) if path.is_file()]
    found = [e for e in entries if e is not None]
    return sorted(found, key=lambda e: e.modified, reverse=True)


def _entry(base: Path, folder: Path) -> ReportEntry | None:
    real = folder.resolve()
    if not real.is_relative_to(base):  # a symlink pointing out of the reports directory
        return None
    plots = tuple(sorted(p.name for p in real.glob("*.png") if p.is_file() and p.resolve().is_relative_to(base)))
    modified = datetime.fromtimestamp((real / REPORT_FILE).stat().st_mtime, UTC)
    return ReportEntry(real.relative_to(base).as_posix(), modified, plots)


def entry_named(root: Path, name: str) -> ReportEntry | None:
    return next((e for e in find_reports(root) if e.name == name), None)


def show_report(root: Path, entry: ReportEntry) -> ShownReport:
    path = root.resolve() / entry.name / REPORT_FILE
    try:
        report = report_from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return ShownReport(entry, error=f"{REPORT_FILE} is not a bench report ({type(exc).__name__}: {exc})")
    return ShownReport(entry, report_tables(report), bool(report.scripted))


def plot_file(root: Path, name: str, file: str) -> Path | None:
    entry = entry_named(root, name)
    if entry is None or file not in entry.plots:
        return None
    return root.resolve() / entry.name / file
