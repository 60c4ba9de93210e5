"""The CLI as a user meets it: exit codes, one-line errors with hints, clean --json on stdout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import duckdb
import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import SAMPLES, claude_line, write_lines

ENV = dict(os.environ, TZ="UTC", NO_COLOR="1", COLUMNS="120")


def stallscan(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=120
    )


def _logs(tmp_path):
    """A folder of three of the samples' formats (each format an ingest reads costs it a batch of queries)."""
    tree = tmp_path / "logs"
    for sub in ("claude-code", "codex", "hermes"):
        shutil.copytree(SAMPLES / sub, tree / sub)
    return tree


def test_ingest_json_is_clean_on_stdout(tmp_path):
    db, logs = tmp_path / "x.duckdb", _logs(tmp_path)
    p = stallscan("ingest", str(logs), "--db", str(db), "--json")  # a real pipe: nothing else on stdout
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)  # nothing but the JSON document on stdout
    assert summary["ingested"] == summary["files"] == len(list(logs.rglob("*.jsonl"))) and summary["rejects"] == 0
    assert summary["lines"] >= summary["events"] > 0
    again = json.loads(stallscan("ingest", str(logs), "--db", str(db), "--json").stdout)
    assert again["unchanged"] == summary["files"] and again["ingested"] == 0


def test_report_from_paths_in_one_command(tmp_path):
    """In this process (CliRunner): the one command's ingest and report, not its process, are the subject."""
    logs = _logs(tmp_path)
    r = CliRunner().invoke(app, ["report", str(logs), "--db", str(tmp_path / "r.duckdb"), "--format", "json"])
    assert r.exit_code == 0, (r.output, r.exception)
    data = json.loads(r.stdout)
    ok = data["corpus"]["files_by_status"]["ok"]
    assert ok == len(list(logs.rglob("*.jsonl"))) and 0 < data["corpus"]["totals"]["files"] <= ok
    assert "ingested" in r.stderr


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["ingest", "/no/such/path"], 3, "no such file or directory: /no/such/path"),
        (["ingest", "/no/such/*.jsonl"], 3, "no file matches /no/such/*.jsonl"),
        (["ingest", str(SAMPLES), "--format", "nope"], 2, "unknown format 'nope'"),
    ],
)
def test_user_errors_are_one_line_with_exit_code(tmp_path, args, code, message):
    p = stallscan(*args, "--db", str(tmp_path / "e.duckdb"))
    assert p.returncode == code
    assert p.stderr.splitlines()[0] == f"error: {message}"
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_strict_fails_on_rejects(tmp_path):
    f = write_lines(tmp_path / "bad.jsonl", [claude_line("user", 1), "{broken"])
    p = stallscan("ingest", str(f), "--db", str(tmp_path / "s.duckdb"), "--strict")
    assert p.returncode == 1 and "1 line(s) rejected" in p.stderr


def test_unreadable_file_exit_3_after_ingesting_the_rest(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("running as root: permissions do not stop reads")
    good = write_lines(tmp_path / "a.jsonl", [claude_line("user", 1)])
    bad = write_lines(tmp_path / "b.jsonl", [claude_line("user", 2)])
    bad.chmod(0)
    p = stallscan("ingest", str(tmp_path), "--db", str(tmp_path / "u.duckdb"), "--json")
    assert p.returncode == 3 and json.loads(p.stdout)["unreadable"][0][0] == str(bad)
    assert good


def test_locked_database_names_the_holder(tmp_path):
    db = tmp_path / "locked.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb,time; c=duckdb.connect({str(db)!r}); print('ok', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ok"
        p = stallscan("ingest", str(SAMPLES), "--db", str(db))
        assert p.returncode == 4
        assert p.stderr.splitlines()[0] == f"error: database {db} is locked by process {holder.pid}"
        assert p.stderr.splitlines()[1].startswith("hint:")
    finally:
        holder.kill()


def test_newer_schema_is_refused(tmp_path):
    db = tmp_path / "new.duckdb"
    c = duckdb.connect(str(db))
    c.execute("CREATE TABLE stallscan_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    c.execute("INSERT INTO stallscan_meta VALUES ('schema_version', '999')")
    c.close()
    p = stallscan("ingest", str(SAMPLES), "--db", str(db))
    assert p.returncode == 5 and "newer stallscan (schema 999" in p.stderr


def test_not_a_database_file(tmp_path):
    db = tmp_path / "junk.duckdb"
    db.write_bytes(b"this is not duckdb" * 100)
    p = stallscan("report", "--db", str(db))
    assert p.returncode == 5 and p.stderr.startswith(f"error: {db} is not a stallscan database")


def test_sql_command_formats(tmp_path, sample_ingested_file):
    db = str(tmp_path / "q.duckdb")
    shutil.copy(sample_ingested_file, db)
    p = stallscan(
        "sql", "SELECT source_format, count(*) AS n FROM events GROUP BY 1 ORDER BY 1", "--db", db, "--format", "csv"
    )
    assert p.returncode == 0
    assert p.stdout.splitlines()[0] == "source_format,n"
    bad = stallscan("sql", "SELECT nope FROM events", "--db", db)
    assert bad.returncode == 2 and bad.stderr.startswith("error: query failed")
