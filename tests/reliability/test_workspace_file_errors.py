"""Mistakes in a workspace JSON file, through the real `askwith ingest`.

Before: Python internals (`Member.__init__() got an unexpected keyword argument 'title'`, `is not valid: 'id'`) and an
undocumented format. After: the documented JSON Schema (bot/store/world.schema.json) is checked first and the one-line
error says where the mistake is and what is expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.store.world import SCHEMA_FILE
from tests.e2e.cli_helpers import ROOT, askwith


SAMPLE = ROOT / "adapters" / "local" / "samples" / "acme.json"


def _broken(edit) -> dict:  # noqa: ANN001
    data = json.loads(SAMPLE.read_text())
    edit(data)
    return data


CASES = {
    "extra field": (lambda d: d["members"][0].update(title="CEO"), "members[0]: unexpected field 'title'"),
    "missing id": (lambda d: d["channels"][1].pop("id"), "channels[1]: 'id' is missing"),
    "bad kind": (lambda d: d["channels"][0].update(kind="room"), "channels[0].kind: 'room' is not one of"),
    "bad share": (lambda d: d["members"][1]["policy"].update(share="maybe"), "members[1].policy.share"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_file_is_reported_in_one_readable_line(case: str, tmp_path: Path) -> None:
    edit, expected = CASES[case]
    path = tmp_path / "ws.json"
    path.write_text(json.dumps(_broken(edit)))

    result = askwith(tmp_path / "data", "ingest", "--workspace", str(path))

    assert result.returncode == 1
    line = " ".join(result.stderr.split())
    assert expected in line and "world.schema.json" in line
    assert "Traceback" not in result.stderr and "__init__" not in result.stderr


def test_the_schema_documents_the_bundled_sample_and_the_readme_points_at_it() -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator(json.loads(SCHEMA_FILE.read_text())).validate(json.loads(SAMPLE.read_text()))
    assert "bot/store/world.schema.json" in (ROOT / "README.md").read_text()
