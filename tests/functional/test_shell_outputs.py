"""What the shell sees: a reader that closes the pipe early, CSV line ends, session refs as one word."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import SAMPLES

ENV = dict(os.environ, TZ="UTC", NO_COLOR="1", COLUMNS="100")


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=300
    )


def _in_process(*args: str) -> tuple[int, str, str]:
    """The command in this process (CliRunner), where the process is not the subject."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    r = CliRunner().invoke(app, list(args), prog_name="stallscan", env={"COLUMNS": "100", "STALLSCAN_CONFIG": None})
    return r.exit_code, r.stdout, r.stderr


def test_a_reader_that_closes_the_pipe_early_is_no_error(tmp_path, sample_ingested_file):
    """`stallscan ... | head -1`: the command stops quietly with exit 0 (was 'error: Broken pipe', exit 3)."""
    db = str(tmp_path / "s.duckdb")
    shutil.copy(sample_ingested_file, db)  # (a database to open: the session's ingest of sample_logs)
    # far more than a pipe buffer holds, so the writer is still writing when the reader goes away
    p = subprocess.Popen(
        [sys.executable, "-m", "stallscan", "sql", "SELECT range AS n FROM range(300000)", "--format", "csv"]
        + ["--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert p.stdout is not None and p.stderr is not None
    assert p.stdout.readline() == b"n\n"
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 0, err
    assert err == ""


def test_a_pipe_closed_before_the_terminal_report_is_no_error(tmp_path, sample_ingested_file):
    """`stallscan report | head -1` draws the terminal report through rich, whose own broken-pipe handling
    exited 1 with nothing said; now it stops quietly with exit 0 as the other outputs do. The pipe's read end is
    closed before the command starts, so its first write meets the closed pipe whatever the machine's pace."""
    db = str(tmp_path / "s.duckdb")
    shutil.copy(sample_ingested_file, db)
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(
            [sys.executable, "-m", "stallscan", "report", "--db", db], stdout=w, stderr=subprocess.PIPE, env=ENV,
            timeout=300,
        )  # fmt: skip
    finally:
        os.close(w)
    assert p.returncode == 0, p.stderr.decode()
    assert b"Traceback" not in p.stderr and b"error" not in p.stderr, p.stderr.decode()


def test_csv_lines_end_in_a_newline(tmp_path, sample_ingested_file):
    db = str(tmp_path / "s.duckdb")
    shutil.copy(sample_ingested_file, db)
    for args in (["sweep", "--format", "csv"], ["sql", "SELECT 1 AS a, 'x' AS b", "--format", "csv"]):
        p = subprocess.run(
            [sys.executable, "-m", "stallscan", *args, "--db", db], capture_output=True, env=ENV, timeout=300
        )
        assert p.returncode == 0, p.stderr
        assert b"\r" not in p.stdout and p.stdout.endswith(b"\n"), args


def test_session_refs_are_one_shell_word(tmp_path):
    """Aider session ids hold a space and the start time ('<folder>/aider 2025-12-03T14:43:45'); two sessions
    started the same hour are told apart only past the space. Their refs print the space as '_', and `show`
    opens a session by that ref as by its id (in-process; the sessions table as the shell gets it, a process)."""
    logs = tmp_path / "proj"
    logs.mkdir()
    text = (SAMPLES / "aider" / ".aider.chat.history.md").read_text(encoding="utf-8")
    later = text.replace("# aider chat started at 2025-12-03 14:43:45", "# aider chat started at 2025-12-03 14:59:10")
    assert later != text
    (logs / ".aider.chat.history.md").write_text(text + "\n" + later, encoding="utf-8")
    db = str(tmp_path / "s.duckdb")
    assert _in_process("ingest", str(logs), "--db", db)[0] == 0
    rows = json.loads(_in_process("sessions", "--db", db, "--format", "json")[1])["sessions"]
    ids = sorted(r["session_id"] for r in rows)
    assert len(ids) == 2 and all(" " in i for i in ids), ids
    for r in rows:
        assert " " not in r["ref"] and "\t" not in r["ref"], r
        shown = json.loads(_in_process("show", r["ref"], "--db", db, "--format", "json")[1])
        assert shown["session_id"] == r["session_id"]
        exact = json.loads(_in_process("show", r["session_id"], "--db", db, "--format", "json")[1])
        assert exact["session_id"] == r["session_id"]
    table = _cli("sessions", "--db", db).stdout
    assert all(r["ref"] in table for r in rows)
