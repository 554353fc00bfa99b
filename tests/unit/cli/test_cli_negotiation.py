from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import _register_all, app


ROOT = Path(__file__).parents[3]
SAMPLES = ROOT / "adapters" / "local" / "samples"


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("ASKWITH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("ASKWITH_DATABASE_URL", raising=False)
    monkeypatch.delenv("ASKWITH_LLM_BASE_URL", raising=False)
    _register_all()
    return CliRunner()


def test_bench_negotiation_scripted_runs_both_settings_and_both_baselines(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    args = ["bench", "negotiation", "--scripted", "--runs", "3", "--baseline", "all", "--out", str(out)]
    result = runner.invoke(app, args, env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    text = result.output
    assert "SCRIPTED" in text and "not any model's negotiation quality" in text
    for word in ("Cooperative", "Competitive", "proposed", "no-utility-prompt", "no-validation", "initial"):
        assert word in text
    for column in ("Agreement", "Error", "Turns", "u_alice", "u_bob", "SW", "L2 to Pareto"):
        assert column in text
    for setting in ("cooperative", "competitive"):
        rows = list(csv.DictReader((out / f"negotiation-{setting}.csv").open()))
        assert len(rows) == 9 and {r["variant"] for r in rows} == {"proposed", "no-utility-prompt", "no-validation"}
        document = json.loads((out / f"negotiation-{setting}.json").read_text())
        assert document["scripted"] is True and len(document["summaries"]) == 3 and len(document["runs"]) == 9
        assert document["frontier"] and set(document["initial"]) == {"u_a", "u_b", "sw", "l2"}
        assert (out / f"negotiation-{setting}.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_without_a_model_says_what_to_configure(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "negotiation", "--runs", "1", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "ASKWITH_LLM_BASE_URL" in str(result.exception)


@pytest.mark.parametrize(("answer", "status"), [("accept", "confirmed"), ("decline", "declined")])
def test_negotiate_for_members_from_the_command_line(
    runner: CliRunner, tmp_path: Path, answer: str, status: str
) -> None:
    # A copy: a workspace file given by path takes the negotiation's posts (its journal), the bundled sample must not.
    workspace = str(tmp_path / "acme.json")
    shutil.copyfile(SAMPLES / "acme.json", workspace)
    loaded = runner.invoke(
        app,
        ["negotiate", "profile", "load", str(SAMPLES / "acme-negotiation-profiles.json"), "--workspace", workspace],
    )
    assert loaded.exit_code == 0, loaded.output
    assert "stored 2 negotiation profile(s)" in loaded.output
    args = ["negotiate", "--workspace", workspace, "--as", "alice", "--with", "bob", "--scripted", "--answer", answer]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Accept the task trade your agent agreed with bob's agent?" in result.output
    assert "agreement after" in result.output and f"confirmation: {status}" in result.output
    assert "SCRIPTED" in result.output
