"""Every command with a matrix of bad arguments: no traceback, the documented exit code (docs/errors.md:
2 usage, 3 missing input or database, 5 not a stallscan database), and a non-empty line on stderr."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import SAMPLES

TRANSCRIPT = SAMPLES / "hermes" / "normal_session.jsonl"


@pytest.fixture(scope="module")
def db(tmp_path_factory, sample_ingested_file):
    path = tmp_path_factory.mktemp("bad") / "b.duckdb"
    shutil.copy(sample_ingested_file, path)  # sample_logs ingested
    return str(path)


def cases(db: str, tmp: str) -> list[tuple[list[str], int]]:
    missing = f"{tmp}/nope.duckdb"
    out = [
        (["frobnicate"], 2),
        (["report", "--no-such-option"], 2),
        (["ingest", f"{tmp}/no/such/dir", "--db", f"{tmp}/i.duckdb"], 3),
        (["ingest", str(SAMPLES), "--db", f"{tmp}/i.duckdb", "--format", "xml"], 2),
        (["ingest", str(SAMPLES), "--db", f"{tmp}/i.duckdb", "--input-format", "nope"], 2),
        (["ingest", str(SAMPLES), "--db", f"{tmp}/i.duckdb", "--naive-tz", "Mars/Olympus"], 2),
        (["ingest", str(SAMPLES), "--db", str(TRANSCRIPT)], 5),
        (["report", "--db", db, "--format", "xml"], 2),
        (["report", "--db", db, "--threshold", "-1"], 2),
        (["report", "--db", db, "--bootstrap", "-5"], 2),
        (["report", "--db", db, "--limit", "lots"], 2),
        (["report", "--db", db, "--since", "yesterday-ish"], 2),
        (["report", "--db", db, "--harness", "no_such_harness"], 2),
        (["report", "--db", db, "--model", "no-such-model"], 2),
        (["report", "--db", db, "--section", "nope"], 2),
        (["report", "--db", db, "--format", "html", "-o", f"{tmp}/nodir/r.html"], 3),
        (["report", "--db", str(TRANSCRIPT)], 5),
        (["stalls", "--db", db, "--outcome", "nope"], 2),
        (["stalls", "--db", db, "--retry-bound", "-1"], 2),
        (["stalls", "--db", db, "--format", "yaml"], 2),
        (["stalls", "--db", db, "--session", "zzz-no-session"], 2),
        (["boundaries", "--db", db, "--threshold", "-1"], 2),
        (["boundaries", "--db", db, "--limit", "-1"], 2),
        (["boundaries", "--db", db, "--format", "csv"], 2),
        (["boundaries", "--db", db, "--session", "zzz-no-session"], 2),
        (["sweep", "--db", db, "--min", "5", "--max", "1"], 2),
        (["sweep", "--db", db, "--min", "-1"], 2),
        (["sweep", "--db", db, "--step", "0"], 2),
        (["sweep", "--db", db, "--cost-auto-as-human", "-1"], 2),
        (["sweep", "--db", db, "--cost-human-as-auto", "-0.5"], 2),
        (["sweep", "--db", db, "--policy", "nope"], 2),
        (["sweep", "--db", db, "--by", "weather"], 2),
        (["sweep", "--db", db, "--thresholds", "a,b"], 2),
        (["sweep", "--db", db, "--thresholds", "-1,2"], 2),
        (["sweep", "--db", db, "--bootstrap", "-1"], 2),
        (["sweep", "--db", db, "--format", "xml"], 2),
        (["show", "zzz-no-session", "--db", db], 2),
        (["show", "narration_", "--db", db], 2),  # ambiguous prefix
        (["show", "continue", "--db", db, "--format", "xml"], 2),
        (["show", "continue", "--db", db, "--threshold", "-2"], 2),
        (["sessions", "--db", db, "--sort", "color"], 2),
        (["sessions", "--db", db, "--harness", "nope"], 2),
        (["sessions", "--db", db, "--limit", "-3"], 2),
        (["export", f"{tmp}/x", "--db", db, "--tables", "nope"], 2),
        (["export", f"{tmp}/x", "--db", db, "--partition-by", "no_such_column"], 2),
        (["export", f"{tmp}/x", "--db", db, "--redact", "shred"], 2),
        (["export", str(TRANSCRIPT), "--db", db], 3),  # onto an existing file
        (["sql", "SELECT * FROM no_such_table", "--db", db], 2),
        (["sql", "SELECT 1", "--db", db, "--format", "xml"], 2),
        (["sql", "SELECT 1", "--db", str(TRANSCRIPT)], 5),
    ]
    for cmd in (
        ["report"],
        ["stalls"],
        ["boundaries"],
        ["sweep"],
        ["show", "x"],
        ["sessions"],
        ["export", f"{tmp}/e"],
        ["sql", "SELECT 1"],
    ):
        out.append(([*cmd, "--db", missing], 3))
    return out


def test_bad_argument_matrix(db, tmp_path, monkeypatch):
    # a home without the usual log folders: `report` with no PATH and a missing --db is then exit 3 (nothing to
    # read), on any machine (a home whose folders exist but hold nothing is exit 2: test_inputs_accounted)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    runner = CliRunner()
    failures = []
    for args, code in cases(db, str(tmp_path)):
        r = runner.invoke(app, args)
        text = (r.stdout or "") + (r.stderr or "")
        problems = []
        if r.exit_code != code:
            problems.append(f"exit {r.exit_code}, want {code}")
        if "Traceback" in text or (r.exception and not isinstance(r.exception, SystemExit)):
            problems.append(f"traceback: {r.exception!r}")
        if not (r.stderr or "").strip():
            problems.append("empty stderr")
        if problems:
            failures.append(f"{' '.join(args)}: {'; '.join(problems)}\n{text[-400:]}")
    assert not failures, "\n\n".join(failures)
    assert not (tmp_path / "nope.duckdb").exists()  # a missing database is never created
    assert TRANSCRIPT.read_bytes().startswith(b"{")  # --db on a transcript left it alone


def test_help_lists_choices_and_takes_h():
    runner = CliRunner()
    for cmd in ("ingest", "report", "stalls", "boundaries", "sweep", "show", "sessions", "export", "sql"):
        r = runner.invoke(app, [cmd, "-h"])
        assert r.exit_code == 0, r.output
        assert "<bool>" not in r.stdout and "<str>" not in r.stdout and "<int>" not in r.stdout, (cmd, r.stdout)
        assert "--format" in r.stdout and "--json" in r.stdout and "-h, --help" in r.stdout
    assert "<table|json|markdown|html>" in runner.invoke(app, ["report", "-h"]).stdout
    assert "<router|gap-only|" in runner.invoke(app, ["sweep", "-h"]).stdout


def test_json_alias_on_every_command(db, tmp_path):
    import json

    runner = CliRunner()
    for args in (
        ["report", "--bootstrap", "0"],
        ["stalls"],
        ["boundaries", "--errors-only"],
        ["sweep", "--bootstrap", "0"],
        ["show", "continue"],
        ["sessions"],
        ["sql", "SELECT 1 AS one"],
        ["export", str(tmp_path / "ex"), "--tables", "events"],
    ):
        a = runner.invoke(app, [*args, "--db", db, "--json"])
        b = runner.invoke(app, [*args, "--db", db, "--format", "json"])
        assert a.exit_code == 0 and b.exit_code == 0, (args, a.output, b.output)
        assert json.loads(a.stdout) is not None and json.loads(b.stdout) is not None


def test_vgr_still_names_the_router(db):
    import json

    r = CliRunner().invoke(app, ["sweep", "--db", db, "--policy", "vgr", "--bootstrap", "0", "--format", "json"])
    assert r.exit_code == 0
    assert [x["policy"] for x in json.loads(r.stdout)["recommendations"] if x["policy"] != "labels"] == ["router"]


def test_an_option_is_never_taken_as_the_value_of_another(db, tmp_path, monkeypatch):
    """`--db --full` once wrote a database named `--full` (and one named `--bootstrap` was committed by
    mistake) while the flag was dropped: an option's value that is one of the command's own options is a
    usage error, with nothing written; a file whose name starts with '-' is still reachable as ./-name."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    cases = [
        (["report", str(SAMPLES), "--db", "--full"], "--db", "--full"),
        (["ingest", str(SAMPLES), "--db", "--json"], "--db", "--json"),
        (["report", "--db", db, "-o", "--full"], "--output", "--full"),
        (["report", "--db", db, "--since", "--json"], "--since", "--json"),
        (["sessions", "--db", db, "--harness", "--json"], "--harness", "--json"),
        (["stalls", "--db", db, "--session", "--format=json"], "--session", "--format=json"),
        (["export", str(tmp_path / "ex"), "--db", db, "--tables", "-h"], "--tables", "-h"),
    ]
    for args, option, value in cases:
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stdout == "", args
        lines = r.stderr.splitlines()
        assert lines[0].startswith("error: ") and f"invalid value for {option}: {value} is one of" in lines[0], args
        assert lines[1].startswith("hint: "), args
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no database, no report, no export written
    r = runner.invoke(app, ["ingest", str(SAMPLES / "hermes"), "--db", "./--full"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "--full").read_bytes()[8:12] == b"DUCK"
