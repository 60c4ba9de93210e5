"""The notebook API (stallscan.open) gives the rows the CLI prints with --format json, and only reads the file.

Each corpus is ingested once (the session's ingest of it); the API reads a byte copy of that database, the CLI commands run
on the original, and their JSON is the expected answer (never the API compared with itself).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

import stallscan
from stallscan.cli import app
from stallscan.store.errors import EXIT_DB, DatabaseError, StallscanError


def _cli(*args: str) -> Any:
    r = CliRunner().invoke(app, [*args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.fixture(scope="module", params=["samples", "real"])
def dbs(request, tmp_path_factory):
    """(database the CLI uses, byte copy the API reads): the corpus ingested as `stallscan ingest CORPUS --db`
    does, the session's ingest of it (sample_ingested_file, real_ingested_file: the ingest is not the subject)."""
    ingested = request.getfixturevalue("sample_ingested_file" if request.param == "samples" else "real_ingested_file")
    work = tmp_path_factory.mktemp(request.param)
    cli_db, api_db = work / "cli.duckdb", work / "api.duckdb"
    shutil.copyfile(ingested, cli_db)
    shutil.copyfile(cli_db, api_db)
    return str(cli_db), str(api_db)


@pytest.fixture(scope="module")
def s(dbs):
    opened = stallscan.open(dbs[1])
    yield opened
    opened.close()


def _digest(path: str) -> str:
    return hashlib.md5(Path(path).read_bytes()).hexdigest()


def test_events_match_the_sql_command(dbs, s):
    want = _cli(
        "sql",
        "SELECT event_id, role FROM events ORDER BY session_id, seq, event_id",
        "--format",
        "json",
        "--db",
        dbs[0],
    )
    got = s.events()
    assert isinstance(got, pl.DataFrame)
    assert got.select("event_id", "role").to_dicts() == want
    users = s.events(role="user")
    assert users.height == sum(1 for r in want if r["role"] == "user")
    sid = got["session_id"][0]
    one = s.events(session=sid)
    assert set(one["session_id"]) == {sid}
    assert one.height == got.filter(pl.col("session_id") == sid).height
    assert s.events(limit=2).height == min(2, got.height)


@pytest.mark.parametrize("outcome", ["silent", "exhausted", None])
def test_stalls_match_the_cli(dbs, s, outcome):
    args = ["stalls", "--format", "json", "--limit", "0", "--db", dbs[0]]
    want = _cli(*args, *(["--outcome", outcome] if outcome else []))["stalls"]
    got = s.stalls(outcome=outcome)
    cols = ["event_id", "session_id", "turn_id", "outcome", "round_kind", "signature", "stall_index", "would_do"]
    assert got.select(cols).to_dicts() == [{c: r[c] for c in cols} for r in want]
    assert got.columns == list(want[0]) if want else got.height == 0


def test_stalls_at_another_bound(dbs, s):
    want = _cli("stalls", "--retry-bound", "1", "--format", "json", "--limit", "0", "--db", dbs[0])["stalls"]
    got = s.stalls(retry_bound=1)
    assert got.select("event_id", "outcome", "would_do").to_dicts() == [
        {"event_id": r["event_id"], "outcome": r["outcome"], "would_do": r["would_do"]} for r in want
    ]


@pytest.mark.parametrize(("threshold", "errors_only"), [(2.0, True), (2.0, False), (5.0, True)])
def test_boundaries_match_the_cli(dbs, s, threshold, errors_only):
    args = ["boundaries", "--format", "json", "--threshold", str(threshold), "--db", dbs[0]]
    want = _cli(*args, *(["--errors-only"] if errors_only else []))["decisions"]
    got = s.boundaries(threshold=threshold, errors_only=errors_only)
    cols = ["event_id", "session_id", "line", "decided_by", "decision", "origin", "error", "excerpt"]
    assert got.select(cols).to_dicts() == [{c: r[c] for c in cols} for r in want]
    if errors_only:
        assert set(got["error"]) <= {"auto_as_human", "human_as_auto"}


def test_sweep_matches_the_cli(dbs, s):
    # the CLI's sweep reads the boundaries its `boundaries` command left: replay them at 2 s first
    _cli("boundaries", "--format", "json", "--db", dbs[0])
    want = _cli("sweep", "--format", "json", "--step", "0.05", "--bootstrap", "200", "--db", dbs[0])
    curve = s.sweep(step=0.05)
    assert curve.to_dicts() == want["curve"]
    recs = s.recommendations(step=0.05, bootstrap=200)
    cols = ["policy", "group", "threshold", "cost", "n_events", "n_gap_decided", "interval", "bootstrap"]
    assert recs.select(cols).to_dicts() == [{c: r[c] for c in cols} for r in want["recommendations"]]


def test_the_database_file_is_only_read(dbs):
    before = _digest(dbs[1])
    with stallscan.open(dbs[1]) as opened:
        opened.stalls()
        opened.boundaries()
        opened.sweep(step=0.5)
        # the file is let go after opening: a writer can take it meanwhile
        writer = duckdb.connect(dbs[1])
        writer.close()
    assert _digest(dbs[1]) == before


def test_missing_database_is_a_clear_error(tmp_path):
    with pytest.raises(DatabaseError) as exc:
        stallscan.open(tmp_path / "nope.duckdb")
    assert exc.value.exit_code == EXIT_DB
    assert "no database at" in exc.value.message and "stallscan ingest" in (exc.value.hint or "")


def test_a_database_without_tables_is_a_clear_error(tmp_path):
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    with pytest.raises(DatabaseError, match="holds no stallscan tables"):
        stallscan.open(empty)


def test_bad_arguments_are_user_errors(dbs, s):
    with pytest.raises(StallscanError, match="unknown outcome"):
        s.stalls(outcome="sad")
    with pytest.raises(StallscanError, match="unknown policy"):
        s.sweep(policy="coin")
    with pytest.raises(StallscanError, match="no session"):
        s.events(session="no-such-session-id")


def test_import_stallscan_stays_cheap():
    code = "import sys, stallscan; assert 'polars' not in sys.modules and 'duckdb' not in sys.modules; stallscan.open"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert callable(stallscan.open) and stallscan.Stallscan.__module__ == "stallscan.api"
