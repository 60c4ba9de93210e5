"""Issue 23, "the terminal and the shell": ingest's skipped kinds behind --verbose, click's usage errors as
`error:` + `hint:`, the `sql` hint and its read-only refusal, no trailing padding in piped output, and the
options that mean the same on every command (--limit 0, --harness / --model / --since / --until / --config,
did-you-mean for a harness name)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import SAMPLES

ENV = dict(os.environ, TZ="UTC", NO_COLOR="1", COLUMNS="80", LINES="40")
ENV.pop("STALLSCAN_CONFIG", None)


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The command as a shell pipeline runs it: stdout and stderr are pipes, not terminals."""
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=600
    )


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args), prog_name="stallscan", env={"COLUMNS": "100", "STALLSCAN_CONFIG": None})
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def db(tmp_path_factory, sample_db_file) -> str:
    path = tmp_path_factory.mktemp("shellopts") / "s.duckdb"
    shutil.copy(sample_db_file, path)  # (built once per run: ingested and replayed)
    return str(path)


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> str:
    """A config whose one prompt pattern labels every Claude Code user message automatic."""
    path = tmp_path_factory.mktemp("cfg") / "stallscan.toml"
    path.write_text(
        "[[prompts]]\n"
        'id = "test.claude_all_automatic"\n'
        'harness = ["claude_code"]\n'
        'match = "regex"\n'
        'text = "(?s).*"\n'
        'origin = "automatic"\n'
        'citation = "test: every Claude Code user message"\n',
        encoding="utf-8",
    )
    return str(path)


def _sessions(db: str, *extra: str) -> list[dict]:
    code, out, err = _run("sessions", "--db", db, "--json", *extra)
    assert code == 0, err
    return list(json.loads(out)["sessions"])


# --- ingest: the skipped kinds behind --verbose ------------------------------------------------------------


def test_ingest_lists_skipped_kinds_only_with_verbose(tmp_path):
    """At 80x40 the summary fits the screen: the knowingly skipped records are one line (their total, their
    number of kinds, how to list them); -v lists the kinds; --json always carries them. Through pipes, no
    line of either summary ends in white space (test_piped_output_has_no_trailing_padding's ingest runs).
    (Three of the samples' formats: 13 kinds of skipped records, at a fifth of the whole folder's ingest.)"""
    logs = tmp_path / "logs"
    for sub in ("claude-code", "codex", "copilot-cli"):
        shutil.copytree(SAMPLES / sub, logs / sub)
    code, out, err = _run("ingest", str(logs), "--db", str(tmp_path / "j.duckdb"), "--json")
    assert code == 0, err
    con = duckdb.connect(str(tmp_path / "j.duckdb"), read_only=True)
    stored = dict(con.execute("SELECT kind, count(*) FROM skipped GROUP BY ALL").fetchall())
    con.close()
    assert len(stored) > 10  # the samples hold many kinds of records stallscan skips knowingly
    assert json.loads(out)["skipped"] == stored

    plain = _cli("ingest", str(logs), "--db", str(tmp_path / "p.duckdb"))
    assert plain.returncode == 0, plain.stderr
    lines = plain.stderr.splitlines()
    assert len(lines) < 40, plain.stderr
    assert f"{sum(stored.values()):,} record(s) skipped knowingly, of {len(stored)} kind(s)" in plain.stderr
    assert "--verbose" in plain.stderr
    assert not [ln for ln in lines if ln.split() and ln.split()[0] in stored], plain.stderr

    verbose = _cli("ingest", str(logs), "--db", str(tmp_path / "v.duckdb"), "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    listed = {ln.split()[0]: ln.split()[-1] for ln in verbose.stderr.splitlines() if ln.split()}
    assert {k: listed.get(k) for k in stored} == {k: f"{n:,}" for k, n in stored.items()}
    for p in (plain, verbose):
        assert p.stdout == ""
        assert [ln for ln in p.stderr.splitlines() if ln != ln.rstrip()] == [], p.stderr


# --- click's usage errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message, hint",
    [
        (["report", "--sectoin", "x"], "no such option --sectoin", "did you mean"),
        (["sql"], "missing argument QUERY", "stallscan sql -h"),
        (["report", "--limit", "lots"], "invalid value for --limit", "stallscan report -h"),
        (["sessions", "--sort"], "--sort", "stallscan sessions -h"),
        (["sessions", "--desc=yes"], "--desc", "stallscan sessions -h"),
        (["repor"], "no such command 'repor'", "did you mean report"),
        (["guard", "status", "--nope"], "no such option --nope", "stallscan guard status -h"),
        (["spark", "replay"], "missing argument", "stallscan spark replay -h"),
    ],
)
def test_usage_errors_are_one_error_line_and_a_hint(args, message, hint):
    """Unknown option or command, missing argument, bad value: `error: ...` then `hint: ...` on stderr and
    exit 2 (docs/errors.md), never click's Usage block."""
    code, out, err = _run(*args)
    assert code == 2, (code, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith("error: ") and message in lines[0], err
    assert lines[1].startswith("hint: ") and hint in lines[1], err
    assert "Usage:" not in err and "Try '" not in err


def test_usage_error_in_a_real_shell_is_the_same_shape():
    p = _cli("report", "--no-such-option")
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "error: stallscan report: no such option --no-such-option",
        "hint: did you mean --section? stallscan report -h lists the options and arguments",
    ]
    assert p.stdout == ""


# --- sql ---------------------------------------------------------------------------------------------------


def test_sql_hint_lists_every_table_and_view(db):
    code, _, err = _run("boundaries", "--db", db, "--limit", "1")  # derived tables: user_labels, turn_boundaries...
    assert code == 0, err
    con = duckdb.connect(db, read_only=True)
    query = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
    names = [r[0] for r in con.execute(query).fetchall()]
    con.close()
    assert {"events", "sessions", "user_labels", "turn_boundaries"} <= set(names)
    code, out, err = _run("sql", "SELECT * FROM no_such_table", "--db", db)
    assert code == 2 and out == ""
    hint = err.splitlines()[-1]
    assert hint.startswith("hint: ")
    listed = {n.strip() for part in hint[len("hint: ") :].split(";") for n in part.split(":", 1)[1].split(",")}
    assert listed == set(names), (listed ^ set(names), hint)


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO files SELECT * FROM files",
        "DELETE FROM events",
        "CREATE TABLE mine AS SELECT 1",
        "DROP VIEW sessions",
        "UPDATE events SET text = ''",
    ],
)
def test_sql_write_says_the_database_is_read_only_here(db, statement):
    con = duckdb.connect(db, read_only=True)
    before = con.execute("SELECT count(*) FROM events").fetchone()
    con.close()
    code, out, err = _run("sql", statement, "--db", db)
    assert code == 2 and out == ""
    assert err.startswith("error: the database is open read-only here"), err
    assert "Invalid Input Error" not in err and len(err.splitlines()) == 2
    con = duckdb.connect(db, read_only=True)
    assert con.execute("SELECT count(*) FROM events").fetchone() == before
    assert "mine" not in {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()


# --- piped output ------------------------------------------------------------------------------------------


def test_piped_output_has_no_trailing_padding(db, tmp_path):
    """Every command that prints a table or a summary, with stdout and stderr as pipes: no line ends in
    white space (rich pads cells and titles to the width). A handful run as processes whose stdout and stderr
    are OS pipes; the others in-process, where click's captured streams are no terminal either, through the
    same consoles (stallscan.report.streams). Ingest's summaries: test_ingest_lists_skipped_kinds_only_with_verbose."""
    ref = _sessions(db, "--harness", "claude_code")[0]["ref"]
    runs = {
        "sql": (["sql", "SELECT kind, count(*) AS n FROM events GROUP BY ALL ORDER BY 1", "--db", db], True),
        "report": (["report", "--db", db, "--bootstrap", "0"], True),
        "report --full": (["report", "--db", db, "--bootstrap", "0", "--full"], True),
        "boundaries": (["boundaries", "--db", db], True),
        "sweep": (["sweep", "--db", db, "--bootstrap", "0"], True),
        "stalls": (["stalls", "--db", db], True),
        "show": (["show", ref, "--db", db], True),
        "sessions": (["sessions", "--db", db], True),
        "check": (["check", "--db", db], True),
        "export": (["export", str(tmp_path / "ex"), "--db", db, "--tables", "events"], True),
        "guard status": (["guard", "status", "--scope", "project", "--project", str(tmp_path)], True),
    }
    in_process = {"report --full", "boundaries", "sweep", "stalls", "sessions", "export", "guard status"}
    padded, failed = {}, {}
    for name, (args, prints) in runs.items():
        if name in in_process:
            r = CliRunner().invoke(app, args, prog_name="stallscan", env={"COLUMNS": "80", "STALLSCAN_CONFIG": None})
            code, out, err = r.exit_code, r.stdout, r.stderr
        else:
            p = _cli(*args)
            code, out, err = p.returncode, p.stdout, p.stderr
        if code != 0 or bool(out.strip()) != prints:
            failed[name] = (code, err[-300:])
        bad = [ln for ln in (out + err).splitlines() if ln != ln.rstrip()]
        if bad:
            padded[name] = bad[:3]
    assert not padded and not failed, (padded, failed)


# --- options that mean the same everywhere -----------------------------------------------------------------


def test_limit_zero_means_no_limit_on_every_command(db):
    def rows(*args: str, key: str) -> list:
        code, out, err = _run(*args, "--db", db, "--json")
        assert code == 0, (args, err)
        return list(json.loads(out)[key])

    every = rows("boundaries", "--all", key="decisions")
    assert len(every) > 20
    assert rows("boundaries", "--all", "--limit", "0", key="decisions") == every
    assert len(rows("boundaries", "--all", "--limit", "3", key="decisions")) == 3
    stalls = rows("stalls", "--limit", "100000", key="stalls")
    assert len(stalls) > 3
    assert rows("stalls", "--limit", "0", key="stalls") == stalls
    assert len(rows("stalls", "--limit", "3", key="stalls")) == 3
    sessions = _sessions(db)
    assert _sessions(db, "--limit", "0") == sessions and len(_sessions(db, "--limit", "2")) == 2

    def worst(limit: str) -> list:
        code, out, err = _run("report", "--db", db, "--json", "--bootstrap", "0", "--limit", limit)
        assert code == 0, err
        return list(json.loads(out)["boundaries"]["misclassified"])

    assert len(worst("1")) == 1
    assert worst("0") == worst("100000") and len(worst("0")) > 1


@pytest.mark.parametrize("command", ["report", "sessions", "stalls", "boundaries", "sweep"])
def test_unknown_harness_names_the_closest(db, command):
    code, out, err = _run(command, "--db", db, "--harness", "claude", "--json")
    assert code == 2 and out == ""
    error, hint = err.splitlines()
    assert error == "error: unknown --harness 'claude'"
    assert hint.startswith("hint: did you mean claude_code?") and "codex" in hint  # then the valid names


def test_session_filters_mean_the_same_on_every_command(db):
    every = _sessions(db)
    codex = {r["session_id"] for r in every if r["harness"] == "codex"}
    assert codex and len(codex) < len(every)
    assert {r["session_id"] for r in _sessions(db, "--harness", "codex")} == codex

    code, out, err = _run("boundaries", "--db", db, "--json", "--all")
    assert code == 0, err
    all_rows = json.loads(out)["decisions"]
    code, out, err = _run("boundaries", "--db", db, "--json", "--all", "--harness", "codex")
    assert code == 0, err
    assert json.loads(out)["decisions"] == [r for r in all_rows if r["session_id"] in codex]

    code, out, err = _run("stalls", "--db", db, "--json", "--limit", "0")
    assert code == 0, err
    stalls = json.loads(out)["stalls"]
    code, out, err = _run("stalls", "--db", db, "--json", "--limit", "0", "--harness", "codex")
    assert code == 0, err
    assert json.loads(out)["stalls"] == [r for r in stalls if r["session_id"] in codex]

    def prompts(*extra: str) -> int:
        code, out, err = _run("sweep", "--db", db, "--json", "--bootstrap", "0", "--policy", "router", *extra)
        assert code == 0, err
        return sum(r["n_events"] for r in json.loads(out)["recommendations"] if r["policy"] == "router")

    # each session has one harness: the parts add up. The parts: codex alone, and the other harnesses in two
    # halves, each half one repeated --harness (one sweep per part, not one per harness of sample_logs)
    others = sorted({r["harness"] for r in every} - {"codex"})
    assert len(others) >= 4
    halves = [others[::2], others[1::2]]
    parts = [prompts("--harness", "codex")] + [prompts(*(a for h in half for a in ("--harness", h))) for half in halves]
    assert all(n > 0 for n in parts) and sum(parts) == prompts() > 0

    # time: a session is in when it was active in the window (whole sessions)
    starts = sorted(r["start"] for r in every if r["start"])
    cut = starts[len(starts) // 2]
    later = {r["session_id"] for r in _sessions(db, "--since", cut)}
    assert {r["session_id"] for r in every if r["start"] and r["start"] >= cut} <= later
    assert later <= {r["session_id"] for r in every if r["last"] and r["last"] >= cut}
    earlier = {r["session_id"] for r in _sessions(db, "--until", cut)}
    assert earlier == {r["session_id"] for r in every if r["start"] and r["start"] < cut}
    for command in ("stalls", "boundaries", "sweep", "sessions", "report"):
        code, _, err = _run(command, "--db", db, "--since", "last tuesday")
        assert code == 2 and "--since: not a date/time" in err, (command, err)


def test_export_keeps_the_filtered_sessions(db, tmp_path):
    con = duckdb.connect(db, read_only=True)
    want = con.execute(
        "SELECT count(*) FROM events WHERE session_id IN "
        "(SELECT session_id FROM events GROUP BY ALL HAVING list_has_any(list(source_format), ['codex']))"
    ).fetchone()
    n_files = con.execute("SELECT count(*) FROM files").fetchone()
    con.close()
    out = tmp_path / "ex"
    code, _, err = _run("export", str(out), "--db", db, "--tables", "events,files", "--harness", "codex", "--json")
    assert code == 0, err
    got = duckdb.connect()
    assert got.execute(f"SELECT count(*) FROM '{out}/events/*.parquet'").fetchone() == want and want[0] > 0
    harnesses = got.execute(f"SELECT DISTINCT source_format FROM '{out}/events/*.parquet'").fetchall()
    assert harnesses == [("codex",)]
    assert got.execute(f"SELECT count(*) FROM '{out}/files/*.parquet'").fetchone() == n_files  # written whole
    manifest = json.loads((out / "_stallscan_layout.json").read_text(encoding="utf-8"))
    assert manifest["tables"]["events"]["scoped"] and not manifest["tables"]["files"]["scoped"]
    assert manifest["tables"]["events"]["rows"] == want[0]


def test_config_is_read_by_every_command_that_labels(db, config, tmp_path):
    missing = str(tmp_path / "nope.toml")
    for args in (["report"], ["sweep"], ["stalls"], ["show", "continue"], ["sessions"], ["boundaries"]):
        code, _, err = _run(*args, "--db", db, "--config", missing)
        assert code == 3 and "nope.toml" in err, (args, err)

    ref = _sessions(db, "--harness", "claude_code")[0]["ref"]
    for cfg, rule in (([], "default_human"), (["--config", config], "test.claude_all_automatic")):
        code, out, err = _run("show", ref, "--db", db, "--json", *cfg)
        assert code == 0, err
        first = next(r for r in json.loads(out)["events"] if r["role"] == "user" and r["kind"] == "message")
        assert first["origin_rule"] == rule
        code, out, err = _run("report", "--db", db, "--json", "--bootstrap", "0", "--harness", "claude_code", *cfg)
        assert code == 0, err
        confusion = json.loads(out)["boundaries"]["confusion"]["router"]
        assert ("human" in confusion) == (not cfg), confusion


def test_guard_status_takes_json(tmp_path):
    code, out, err = _run("guard", "status", "--scope", "project", "--project", str(tmp_path), "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert {r["harness"] for r in rows} == {"claude", "codex"} and not any(r["installed"] for r in rows)
