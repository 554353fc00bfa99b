"""The admin page of bench reports: the folders under ASKWITH_BENCH_REPORTS_DIR holding a report.json, their
tables as `askwith bench report` prints them, and their PNG plots, served to admins only and by listed name only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from bot.bench.report import Run, build_report
from bot.bench.report_files import write_report_files
from bot.bench.report_tables import SCRIPTED_NOTE
from bot.settings import Settings
from tests.bench.test_bench_report import config, result
from tests.web.harness import app_for, sign_in, web_settings


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """reports/{nightly/report, old-run} written by the report module (plots included), a broken one, and a
    symlink pointing at a report outside the reports directory."""
    root = tmp_path_factory.mktemp("bench")
    reports, outside = root / "reports", root / "outside"
    items = [result("e1", 1.0, rationales_per_plan=4), result("e2", 0.0), result("e3", 1.0)]
    runs = [Run(Path("a"), config("schedule-easy"), items), Run(Path("b"), config("np", scripted=True), items[:1])]
    write_report_files(build_report(runs), runs, reports / "nightly" / "report")
    write_report_files(build_report(runs[:1]), runs[:1], outside)
    (reports / "broken").mkdir()
    (reports / "broken" / "report.json").write_text('{"configurations": 3}')
    (reports / "escape").symlink_to(outside, target_is_directory=True)
    return reports


@pytest.fixture
def admin(settings: Settings, report_dirs: Path) -> Iterator[TestClient]:
    changed = web_settings(settings, web_admins="carol", bench_reports_dir=report_dirs)
    with TestClient(app_for(changed)) as client:
        sign_in(client, "carol")
        yield client


def test_members_get_403_on_reports_and_plots(settings: Settings, report_dirs: Path) -> None:
    with TestClient(app_for(web_settings(settings, web_admins="carol", bench_reports_dir=report_dirs))) as client:
        sign_in(client, "alice")
        assert client.get("/admin/bench").status_code == 403
        plot = client.get("/admin/bench/plot", params={"report": "nightly/report", "file": "scores.png"})
        assert plot.status_code == 403 and PNG_MAGIC not in plot.content


def test_admins_see_the_reports_tables_and_plots(admin: TestClient, report_dirs: Path) -> None:
    page = admin.get("/admin/bench", params={"report": "nightly/report"})
    assert page.status_code == 200
    html = page.text
    assert "nightly/report" in html and "broken" in html and "escape" not in html
    assert "Table 1: score per dataset (mean over items)" in html
    assert "66.67% (n=3, r)" in html and "paper: iAgents, GPT-4" in html and "56.67%" in html
    assert "floor: constant most-frequent answer" in html and "not a like-for-like comparison" in html
    assert "load chats s (all)" in html
    assert "Table 3: InfoNav behaviour (mean per item)" in html and "#rationales in InfoNav" in html
    assert "Cost per item" in html and "scripted (not a quality figure)" in html and SCRIPTED_NOTE in html
    for plot in ("scores.png", "cost.png"):
        assert f"/admin/bench/plot?report=nightly/report&amp;file={plot}" in html
        served = admin.get("/admin/bench/plot", params={"report": "nightly/report", "file": plot})
        assert served.status_code == 200 and served.headers["content-type"] == "image/png"
        assert served.content == (report_dirs / "nightly" / "report" / plot).read_bytes()
        assert served.content.startswith(PNG_MAGIC)


def test_a_report_that_cannot_be_read_says_so(admin: TestClient) -> None:
    html = admin.get("/admin/bench", params={"report": "broken"}).text
    assert "report.json is not a bench report" in html and "Table 1" not in html


@pytest.mark.parametrize(
    ("report", "file"),
    [
        ("nightly/report", "report.json"),  # listed report, but not a plot
        ("nightly/report", "../report/scores.png"),
        ("nightly/../nightly/report", "scores.png"),
        ("..", "scores.png"),
        ("escape", "scores.png"),  # a symlink out of the reports directory
        ("/etc", "passwd"),
        ("nightly/report", "/etc/passwd"),
    ],
)
def test_only_plots_of_listed_reports_are_served(admin: TestClient, report: str, file: str) -> None:
    response = admin.get("/admin/bench/plot", params={"report": report, "file": file})
    assert response.status_code == 404 and PNG_MAGIC not in response.content


def test_an_unknown_report_is_404_and_an_empty_directory_says_where_it_looked(
    admin: TestClient, settings: Settings, tmp_path: Path
) -> None:
    assert admin.get("/admin/bench", params={"report": "../outside"}).status_code == 404
    with TestClient(app_for(web_settings(settings, web_admins="carol", bench_reports_dir=tmp_path))) as client:
        sign_in(client, "carol")
        html = client.get("/admin/bench").text
        assert "No bench reports yet" in html and "ASKWITH_BENCH_REPORTS_DIR" in html
