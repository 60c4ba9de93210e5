"""`stallscan stalls` and the report's "stalls" section, end to end on the golden transcripts."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import TESTS

GOLDEN = TESTS / "golden" / "stalls"


def _db(tmp_path) -> str:
    db = str(tmp_path / "s.duckdb")
    files = []
    for c in ("seed_narration_only", "seed_three_nudges_exhausted", "seed_narration_then_call"):
        dst = tmp_path / f"{c}.jsonl"  # distinct stems: a Hermes session log is named by its file stem
        dst.write_bytes((GOLDEN / c / "transcript.jsonl").read_bytes())
        files.append(str(dst))
    r = CliRunner().invoke(app, ["ingest", *files, "--db", db])
    assert r.exit_code == 0, r.output
    return db


def test_stalls_json_silent_and_bound(tmp_path):
    db = _db(tmp_path)
    r = CliRunner().invoke(app, ["stalls", "--outcome", "silent", "--format", "json", "--db", db])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [s["outcome"] for s in data["stalls"]] == ["silent_plan_as_answer"]
    assert data["stalls"][0]["excerpt"] == "I'll start by reading the config file."
    assert data["endings_changed_by_bound"] == {"bound": 3, "would_reprompt": 1, "would_deliver": 0, "plan_endings": 2}
    r = CliRunner().invoke(app, ["stalls", "--retry-bound", "5", "--format", "json", "--db", db])
    data = json.loads(r.stdout)
    assert data["endings_changed_by_bound"]["would_reprompt"] == 2  # the exhausted one too (index 4 <= 5)
    assert sum(1 for s in data["stalls"] if s["would_do"] == "deliver") == 0


def test_stalls_session_table_and_bad_outcome(tmp_path):
    db = _db(tmp_path)
    r = CliRunner().invoke(app, ["stalls", "--session", "seed_three_nudges_exhausted", "--db", db])
    assert r.exit_code == 0, r.output
    assert "4 shown" in r.stdout and "deliver" in r.stdout.replace("…", "")
    r = CliRunner().invoke(app, ["stalls", "--outcome", "bogus", "--db", db])
    assert r.exit_code != 0 and "unknown --outcome" in r.output


def test_report_has_stalls_section(tmp_path):
    db = _db(tmp_path)
    r = CliRunner().invoke(app, ["report", "--format", "json", "--db", db, "--retry-bound", "3"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)["stalls"]
    assert set(s) >= {"counts", "silent_endings", "rates", "recovery", "bound_sweep", "signatures"}
    assert {e["outcome"] for e in s["silent_endings"]} == {"silent_plan_as_answer", "exhausted"}
    rec = s["recovery"]["openai_chat"]
    assert rec["episodes"] == 3 and rec["recovered"] == 1 and rec["bound_95"] == 0
    r = CliRunner().invoke(app, ["report", "--db", db, "--section", "stalls"])
    assert r.exit_code == 0 and "Plan-as-answer endings" in r.stdout
