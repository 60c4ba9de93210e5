"""The report data memoised in the database (stallscan.report.memo, table report_memo).

A repeat report on unchanged inputs is read on a read-only connection and writes nothing; every format
and -o print from the same entry; an input, option, config or code change makes another key."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.report import memo
from stallscan.report.registry import ReportOptions
from stallscan.store.db import connect
from tests.helpers import claude_line, fresh_state, keep_state, report_tree

FAST = ["--bootstrap", "20"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The starting state, built once: report_tree's logs ingested and replayed by a report, whose memo entry
    is then deleted (each test computes and memoises its own first report); a test works in a fresh copy."""
    work = tmp_path_factory.mktemp("memo") / "work"
    work.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        src = report_tree(work, mp)
        _report(str(src), "--db", str(work / "r.duckdb"), "--format", "json")
    con = duckdb.connect(str(work / "r.duckdb"))
    con.execute("DELETE FROM report_memo")
    con.close()
    return keep_state(work)


@pytest.fixture
def work(built, monkeypatch):
    """The folder a test runs in (the working directory): the built state, fresh, always at the same path."""
    return fresh_state(built, monkeypatch)


@pytest.fixture
def tree(work):
    return work / "logs", str(work / "r.duckdb")


def _report(*args: str) -> str:
    r = CliRunner().invoke(app, ["report", *args, *FAST])
    assert r.exit_code == 0, r.output
    return r.stdout


def _files(db: str) -> list[tuple[str, int, int]]:
    return [(p, os.stat(p).st_size, os.stat(p).st_mtime_ns) for p in (db, db + ".wal") if os.path.exists(p)]


def _rows(db: str, table: str) -> list[tuple]:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_a_repeat_prints_the_same_and_writes_nothing(tree):
    src, db = tree
    first = _report(str(src), "--db", db, "--format", "json")
    assert len(_rows(db, "report_memo")) == 1
    state, stamps, memo_rows = _files(db), _rows(db, "derive_stamps"), _rows(db, "report_memo")
    again = _report(str(src), "--db", db, "--format", "json")
    assert again == first
    assert _files(db) == state  # no write connection: the file and its WAL are as they were
    assert _rows(db, "derive_stamps") == stamps and _rows(db, "report_memo") == memo_rows


def test_every_format_and_output_file_reuse_one_entry(tree, work):
    src, db = tree
    first = {fmt: _report(str(src), "--db", db, "--format", fmt) for fmt in ("json",)}
    state = _files(db)
    for fmt in ("table", "markdown", "html"):
        first[fmt] = _report("--db", db, "--format", fmt)
    _report("--db", db, "-o", str(work / "r.md"))
    assert _files(db) == state and len(_rows(db, "report_memo")) == 1
    assert (work / "r.md").read_text(encoding="utf-8") == first["markdown"]
    # the same documents, computed afresh on a copy of the database without its memo
    fresh = str(work / "f.duckdb")  # (a path as long: the table layout fits the text to the width)
    shutil.copy(db, fresh)
    con = connect(fresh)
    con.execute("DROP TABLE report_memo")
    con.close()
    for fmt, text in first.items():
        assert _report("--db", fresh, "--format", fmt) == text.replace(db, fresh), fmt


def test_the_entry_is_what_is_printed(tree):
    """A repeat prints the stored data: changing the stored row changes the output (so it is served)."""
    src, db = tree
    first = json.loads(_report(str(src), "--db", db, "--format", "json"))
    con = duckdb.connect(db)
    (text,) = con.execute("SELECT data FROM report_memo").fetchone()
    data = json.loads(text)
    data["headline"] = {"marker": "from the memo"}
    con.execute("UPDATE report_memo SET data = ?", [json.dumps(data)])
    con.close()
    served = json.loads(_report(str(src), "--db", db, "--format", "json"))
    assert served["headline"] == {"marker": "from the memo"} != first["headline"]


def test_changes_make_another_key(tree, work):
    src, db = tree
    base = _report(str(src), "--db", db, "--format", "json")
    _report("--db", db, "--format", "json", "--threshold", "3")  # another option: another entry
    assert len(_rows(db, "report_memo")) == 2
    (work / "stallscan.toml").write_text('[labels]\noverrides = "over.csv"\n', encoding="utf-8")
    (work / "over.csv").write_text("event_id,origin\n", encoding="utf-8")
    _report("--db", db, "--format", "json")  # the labels config is part of the key
    assert len(_rows(db, "report_memo")) == 3
    (work / "over.csv").write_text("event_id,origin\nnone-such,human\n", encoding="utf-8")
    _report("--db", db, "--format", "json")  # and so is the override file's content
    assert len(_rows(db, "report_memo")) == 4
    (work / "stallscan.toml").unlink()
    log = sorted((src / "claude-code").rglob("*.jsonl"))[0]
    with log.open("a", encoding="utf-8") as fh:
        fh.write(claude_line("user", 59, session="memo-grown") + "\n")
    grown = json.loads(_report(str(src), "--db", db, "--format", "json"))
    assert grown != json.loads(base)
    assert len(_rows(db, "report_memo")) == 1  # a new events version: the older entries are dropped


def test_every_option_is_in_the_key(tree):
    """Each ReportOptions field (the report command's options) changes the key; none is left out."""
    src, db = tree
    _report(str(src), "--db", db, "--format", "json")
    con = duckdb.connect(db, read_only=True)
    con.execute("SET TimeZone = 'UTC'")
    base = ReportOptions()
    other: dict[str, Any] = {
        "threshold": 3.0,
        "retry_bound": 1,
        "since": datetime(2020, 1, 1, tzinfo=UTC),
        "until": datetime(2030, 1, 1, tzinfo=UTC),
        "harness": ["codex"],
        "model": ["m"],
        "limit": 5,
        "bootstrap": 7,
        "timelines": True,
        "show_args": " --db x",
    }
    public = [f.name for f in dataclasses.fields(ReportOptions) if not f.name.startswith("_")]
    assert sorted(other) == sorted(public)
    keys = {memo.key(con, dataclasses.replace(base, **{k: v})) for k, v in other.items()}
    assert len(keys | {memo.key(con, base)}) == len(other) + 1
    assert memo.key(con, dataclasses.replace(base, _replayed=True)) is None  # parquet input: not memoised
    con.close()


def test_no_change_counter_no_memo(tmp_path):
    con = duckdb.connect(str(tmp_path / "bare.duckdb"))
    con.execute("CREATE TABLE events (session_id VARCHAR)")
    assert memo.get(con, memo.key(con, ReportOptions())) is None
    con.close()


# The console script (stallscan.entry) serves a memo hit before typer loads: what it prints and writes is
# byte for byte what the typer command prints and writes (run here in-process), and anything it is not sure of
# goes to the command.
ENTRY = (
    "import os, sys\nsys.argv = ['stallscan', *{argv!r}]\nfrom stallscan.entry import main\ntry:\n    main()\n"
    "finally:\n    open(os.environ['TYPER_MARK'], 'w').write(str('typer' in sys.modules))"
)


def _run(code: str, argv: list[str], cwd) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "STALLSCAN_CONFIG"} | {"COLUMNS": "120", "NO_COLOR": "1"}
    env["TYPER_MARK"] = str(cwd / "typer-loaded")
    r = subprocess.run([sys.executable, "-c", code.format(argv=argv)], capture_output=True, text=True, cwd=cwd, env=env)
    return r.returncode, r.stdout, r.stderr


def _typer(argv: list[str]) -> tuple[int, str, str]:
    """The typer command on argv, in this process (the tree fixture set the directory and the environment the
    console script's process gets): the output the console script must equal."""
    r = CliRunner().invoke(app, argv, prog_name="stallscan")
    return r.exit_code, r.stdout, r.stderr


def _typer_loaded(cwd) -> bool:
    """Whether the last ENTRY run imported typer (handed the command over)."""
    return {"True": True, "False": False}[(cwd / "typer-loaded").read_text()]


def test_the_console_script_prints_a_memo_hit_as_the_command_does(tree, work):
    src, db = tree
    base = ["report", str(src), "--db", db, *FAST]
    assert _typer([*base, "--format", "json"])[0] == 0  # ingests, builds and memoises
    state = _files(db)
    cases = [
        ["--format", "json"],
        ["--json"],
        ["--format", "markdown"],
        ["--format", "table"],
        ["--format=html"],
        ["--full"],
        ["--section", "threshold", "--section", "stalls"],
    ]
    for extra in cases:
        argv = [*base, *extra]
        by_typer = _typer(argv)
        served = _run(ENTRY, argv, work)
        assert not _typer_loaded(work), (extra, served[2])  # answered before typer was imported
        assert served == by_typer and by_typer[0] == 0, extra
        assert by_typer[2].startswith("ingested 0 file(s)") and by_typer[1], extra
    for name in ("r.md", "r.txt", "r.json"):  # -o: the same file and the same stderr lines
        out = work / name
        by_typer = _typer([*base, "-o", str(out)])
        written = out.read_bytes()
        out.unlink()
        served = _run(ENTRY, [*base, "-o", str(out)], work)
        assert served == by_typer and out.read_bytes() == written and not _typer_loaded(work), name
        assert "wrote " in served[2]
    if os.path.exists("/dev/full") and os.access("/dev/full", os.W_OK):  # a write that fails: disk full
        by_typer = _typer([*base, "-o", "/dev/full"])
        served = _run(ENTRY, [*base, "-o", "/dev/full"], work)
        assert served == by_typer and by_typer[0] != 0 and "error:" in served[2] and not _typer_loaded(work)
    assert _files(db) == state  # neither wrote the database


def test_the_console_script_says_what_the_walk_left_out_as_the_command_does(tree, work):
    """A folder holding a file in no transcript format (a note here): the memo hit still comes from the console
    script, with the command's `note: left out ...` line after the report, byte for byte."""
    src, db = tree
    (src / "NOTES.txt").write_text("not a transcript\n")
    base = ["report", str(src), "--db", db, *FAST, "--format", "json"]
    assert _typer(base)[0] == 0
    by_typer = _typer(base)
    served = _run(ENTRY, base, work)
    assert not _typer_loaded(work), served[2]
    assert served == by_typer and "note: left out 1 file(s)" in served[2] and ".txt 1" in served[2]


def test_the_console_script_hands_over_what_it_is_not_sure_of(tree, work):
    src, db = tree
    base = ["report", str(src), "--db", db, *FAST]
    assert _typer([*base, "--format", "json"])[0] == 0
    for extra in (
        ["--format", "json", "--limit", "-1"],  # the command's error, not a guess
        ["--format", "yaml"],
        ["--format", "json", "--harness", "none-such"],
        ["--format", "json", "--limit", "5"],  # another option set: not memoised yet
        ["-o", str(work / "missing" / "r.md")],
    ):
        handed = _run(ENTRY, [*base, *extra], work)
        by_typer = _typer([*base, *extra])
        assert _typer_loaded(work) and handed == by_typer, extra  # the command ran, as it runs alone
    # a transcript that grew: read by the command, the new state memoised, then served again
    log = sorted((src / "codex").rglob("*.jsonl"))[0]
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 10**9))  # same bytes, another mtime
    handed = _run(ENTRY, [*base, "--format", "json"], work)
    assert _typer_loaded(work) and handed[0] == 0 and "1 file(s)" in handed[2], handed[2]
    served = _run(ENTRY, [*base, "--format", "json"], work)
    assert not _typer_loaded(work) and served[0] == 0 and served[1] == handed[1]
