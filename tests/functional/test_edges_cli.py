"""Edges a user hits: missing database, report with nothing given, empty ingests, -o FILE, --strict,
and the terminal at 80 columns (nothing wider, no cut number, default report within two screens)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import SAMPLES


def cli(*args, cwd=None, home=None, columns="80"):
    env = dict(os.environ, TZ="UTC", NO_COLOR="1", COLUMNS=columns, TERM="dumb")
    env.pop("STALLSCAN_DB", None)
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )


def in_process(*args, columns="80", home=None):
    """The typer app run in this process (CliRunner), for checks of a command's output whose subject is not the
    process: the same app, rendering and exit codes, without an interpreter start-up each. (`report` stays a
    real process where its output is the subject: the console script serves a memo hit before typer.)"""
    env = {"TZ": "UTC", "NO_COLOR": "1", "COLUMNS": columns, "TERM": "dumb", "STALLSCAN_DB": None}
    if home is not None:
        env["HOME"] = str(home)
    r = CliRunner().invoke(app, list(args), prog_name="stallscan", env=env)
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory, sample_db_file):
    db = tmp_path_factory.mktemp("edges") / "e.duckdb"
    shutil.copy(sample_db_file, db)  # sample_logs ingested and replayed (the session's): no test here replays
    return str(db)


@pytest.fixture(scope="module", params=["sample", "real"])
def any_db(request, sample_db, tmp_path_factory):
    if request.param == "sample":
        return sample_db
    db = tmp_path_factory.mktemp("edges_real") / "r.duckdb"  # the real files ingested and reported: the run's, copied
    request.getfixturevalue("real_ingested_file")  # (skips when the real files are absent)
    shutil.copy(request.getfixturevalue("reported_file"), db)
    return str(db)


def test_missing_database_is_exit_3_and_never_created(tmp_path, monkeypatch):
    """report (the console script looks for a memo first) and sql as processes; the rest in-process."""
    monkeypatch.chdir(tmp_path)
    for args in (["report"], ["stalls"], ["boundaries"], ["sweep"], ["sessions"], ["show", "x"], ["sql", "SELECT 1"]):
        if args[0] in ("report", "sql"):
            p = cli(*args, cwd=tmp_path, home=tmp_path)
        else:
            p = in_process(*args, home=tmp_path)
        assert p.returncode == 3, (args, p.stderr)
        lines = p.stderr.strip().splitlines()
        assert lines[0].startswith("error: no database at stallscan.duckdb"), p.stderr
        assert lines[1].startswith("hint: run stallscan ingest"), p.stderr
        assert not (tmp_path / "stallscan.duckdb").exists()


def test_report_with_nothing_given_reads_the_usual_folders(tmp_path):
    home = tmp_path / "home"
    projects = home / ".claude" / "projects" / "-work-demo"
    projects.mkdir(parents=True)
    shutil.copy(SAMPLES / "claude-code" / "session.jsonl", projects / "s.jsonl")
    work = tmp_path / "work"
    work.mkdir()
    p = cli("report", "--bootstrap", "0", cwd=work, home=home)
    assert p.returncode == 0, p.stderr
    assert "reading the usual log folders found here" in p.stderr and str(home / ".claude" / "projects") in p.stderr
    assert "ingested 1 file(s)" in p.stderr
    assert re.search(r"^The answer *$", p.stdout, re.M)
    assert (work / "stallscan.duckdb").exists()


def test_report_with_nothing_anywhere_leaves_no_database(tmp_path):
    p = cli("report", cwd=tmp_path, home=tmp_path)
    assert p.returncode == 3 and "no database at" in p.stderr and "hint:" in p.stderr
    assert not (tmp_path / "stallscan.duckdb").exists()


def test_ingest_that_finds_nothing_leaves_no_database(tmp_path, monkeypatch):
    """ingest has no path before typer (only report does): its exit code and stderr are the command's, in-process."""
    empty = tmp_path / "empty"
    empty.mkdir()
    p = in_process("ingest", str(empty), "--db", str(tmp_path / "n.duckdb"))
    # (issue 23: nothing at all found is exit 2, one error line and a hint, no longer a success)
    assert p.returncode == 2 and p.stderr.startswith(f"error: no transcript found in {empty}\nhint: ")
    assert not (tmp_path / "n.duckdb").exists()
    monkeypatch.chdir(tmp_path)
    p = in_process("ingest", home=tmp_path)  # no PATH, no usual folder
    assert p.returncode == 2 and not (tmp_path / "stallscan.duckdb").exists()


def test_strict_fails_on_unrecognised_files(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    (d / "notes.jsonl").write_text('{"hello": "world"}\n')
    shutil.copy(SAMPLES / "hermes" / "normal_session.jsonl", d / "normal_session.jsonl")
    db = str(tmp_path / "s.duckdb")
    assert in_process("ingest", str(d), "--db", db).returncode == 0  # (ingest: in-process, as above)
    p = in_process("ingest", str(d), "--db", str(tmp_path / "s2.duckdb"), "--strict")
    assert p.returncode == 1 and "no format stallscan reads" in p.stderr


def test_output_file_takes_the_format_from_its_extension(sample_db, tmp_path):
    for name, check in (
        ("r.md", lambda t: t.startswith("# stallscan report")),
        ("r.html", lambda t: t.startswith("<!doctype html>")),
        ("r.json", lambda t: "headline" in json.loads(t)),
        ("r.txt", lambda t: t.splitlines()[0].rstrip() == "The answer"),
    ):
        out = tmp_path / name
        p = cli("report", "--db", sample_db, "--bootstrap", "0", "-o", str(out))
        assert p.returncode == 0 and p.stdout == "", p.stderr
        assert re.search(rf"^wrote {re.escape(str(out))} \(\d+ KB\)$", p.stderr.strip(), re.M), p.stderr
        assert check(out.read_text())
    out = tmp_path / "forced.txt"
    assert cli("report", "--db", sample_db, "--bootstrap", "0", "--format", "markdown", "-o", str(out)).returncode == 0
    assert out.read_text().startswith("# stallscan report")
    p = cli(
        "report", "--db", sample_db, "--bootstrap", "0", "--format", "html", "-o", str(tmp_path / "nodir" / "r.html")
    )
    assert p.returncode == 3 and "does not exist" in p.stderr and "Traceback" not in p.stderr


def _check_width(text: str, width: int = 80) -> None:
    for line in text.splitlines():
        assert len(line) <= width, line
    assert "┃┃" not in text and "││" not in text, "a zero-width column"


def test_terminal_fits_80_columns(any_db):
    # the database named as a user in its folder would (the `show ... --db PATH` lines print it as given:
    # a long temporary path would wrap them and make the count depend on where the test runs)
    here = Path(any_db)
    p = cli("report", "--db", here.name, "--bootstrap", "100", cwd=here.parent)
    assert p.returncode == 0, p.stderr
    _check_width(p.stdout)
    assert len(p.stdout.splitlines()) <= 40, "the default report fits one 80x40 screen (issue 23)"
    full = cli("report", "--db", any_db, "--bootstrap", "100", "--full")
    assert len(full.stdout.splitlines()) > len(p.stdout.splitlines())
    _check_width(full.stdout)
    for args in (["boundaries", "--errors-only"], ["stalls"], ["sessions"], ["sweep", "--bootstrap", "50"]):
        q = in_process(*args, "--db", any_db)
        assert q.returncode == 0, (args, q.stderr)
        _check_width(q.stdout)
    # numbers are never cut: every count of `sessions` and every gap of `boundaries` is printed whole
    rows = json.loads(in_process("sessions", "--db", any_db, "--format", "json", "--sort", "misread", "--desc").stdout)
    table = in_process("sessions", "--db", any_db, "--sort", "misread", "--desc").stdout.splitlines()
    for r in rows["sessions"]:
        line = next(x for x in table if x.startswith(r["ref"] + " "))
        counts = (r[k] for k in ("turns", "silent", "requests", "misread"))
        assert re.search(r"\b" + r"\s+".join(f"{n:,}" for n in counts) + r"\b", line), line
    text = in_process("boundaries", "--errors-only", "--db", any_db).stdout
    for d in json.loads(in_process("boundaries", "--errors-only", "--db", any_db, "--json").stdout)["decisions"]:
        if d["gap_s"] is not None:
            assert f"{d['gap_s']:.2f}" in text
    top = rows["sessions"][0]["ref"]
    q = in_process("show", top, "--db", any_db)
    assert q.returncode == 0, q.stderr
    _check_width(q.stdout)


def test_sections_on_request(sample_db):
    p = cli("report", "--db", sample_db, "--bootstrap", "0", "--section", "boundaries")
    assert (
        p.returncode == 0
        and "Misread turns, worst first" in p.stdout
        and not re.search(r"^The answer *$", p.stdout, re.M)
    )
    assert "Signature hits" not in p.stdout


def test_sessions_sorts_and_prints_refs_show_accepts(sample_db):
    rows = json.loads(in_process("sessions", "--db", sample_db, "--json", "--sort", "turns", "--desc").stdout)
    rows = rows["sessions"]
    turns = [r["turns"] for r in rows]
    assert turns == sorted(turns, reverse=True)
    for r in rows:
        assert set(r) >= {"session_id", "ref", "harness", "start", "turns", "silent", "requests", "misread"}
    misread = json.loads(in_process("boundaries", "--db", sample_db, "--errors-only", "--json").stdout)["decisions"]
    assert sum(r["misread"] for r in rows) == len(misread)
    for r in rows[:5]:
        shown = in_process("show", r["ref"], "--db", sample_db, "--json")
        assert json.loads(shown.stdout)["session_id"] == r["session_id"]
