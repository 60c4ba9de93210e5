"""`stallscan boundaries` and the report's "Turn boundaries" section, end to end on a golden transcript."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.ingest.run import ingest_paths
from stallscan.report.build import ReportOptions, build_report, render_report
from stallscan.store.db import connect
from tests.helpers import TESTS

GOLDEN = TESTS / "golden" / "boundaries"


def _db(tmp_path, case="claude_stop_hook_and_split_reply"):
    db = tmp_path / "t.duckdb"
    con = connect(db)
    ingest_paths(con, [str(GOLDEN / case / "transcript.jsonl")])
    con.close()
    return str(db)


def test_cli_json_lists_decisions(tmp_path):
    db = _db(tmp_path)
    res = CliRunner().invoke(app, ["boundaries", "--db", db, "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [(d["line"], d["decided_by"], d["decision"], d["origin"]) for d in data["decisions"]] == [
        (1, "first", "human", "human"),
        (3, "gap", "continuation", "automatic"),
        (5, "gap", "human", "human"),
        (8, "no_time", "human", "human"),
    ]


def test_cli_threshold_errors_only_and_session(tmp_path):
    db = _db(tmp_path, "gap_equal_threshold")
    res = CliRunner().invoke(app, ["boundaries", "--db", db, "--format", "json", "--errors-only"])
    assert [d["line"] for d in json.loads(res.stdout)["decisions"]] == [5]  # 1.999 s human read as continuation
    res = CliRunner().invoke(app, ["boundaries", "--db", db, "--format", "json", "--errors-only", "--threshold", "1.5"])
    assert json.loads(res.stdout)["decisions"] == []
    res = CliRunner().invoke(app, ["boundaries", "--db", db, "--session", "transcript"])
    assert res.exit_code == 0 and "turn boundaries at 2 s" in res.stdout and "first" in res.stdout
    res = CliRunner().invoke(app, ["boundaries", "--db", db, "--session", "nope"])
    assert res.exit_code == 2 and "no session 'nope'" in res.output
    res = CliRunner().invoke(app, ["boundaries", "--db", db, "--format", "xml"])
    assert res.exit_code == 2


def test_report_section(tmp_path):
    con = connect(_db(tmp_path))
    data = build_report(con, ReportOptions(threshold=2.0))
    b = data["boundaries"]
    json.dumps(b)  # JSON-ready
    assert b["records"] == {"total": 4, "requests": 4, "not_requests": 0}
    assert b["confusion"]["router"]["human"] == {"human": 3, "continuation": 0, "undecided": 0}
    assert b["confusion"]["router"]["automatic"] == {"human": 0, "continuation": 1, "undecided": 0}
    assert b["decided_by"]["no_time"]["n"] == 1 and b["no_time"][0]["reason"] == "negative gap (clock skew)"
    assert b["misclassified"] == []
    assert sum(x["n"] for x in b["gap_histogram"]["automatic"]) == 1
    assert render_report(data)
    con.close()
