"""Errors that pointed the wrong way (issue 24): a full disk was reported as a damaged database (the
ROLLBACK's own error masked "No space left on device"), a zeroed header got the hint to ingest the
database as a transcript, a zeroed block went unnoticed. Through a real process where the process is the
subject (the full disk: DuckDB's and pyarrow's writes; `report`, which the console script's entry serves
before typer; `check`'s exit code with JSON on stdout); the other commands on a damaged database run
in-process through typer's CliRunner (the same typer app and error handling, no interpreter start-up).

The full disk is a real one: a 3 MB tmpfs mounted for the test (root with CAP_SYS_ADMIN, as in the CI
container), so DuckDB's and pyarrow's own writes fail with ENOSPC exactly as on a full disk; a
RLIMIT_FSIZE limit would raise EFBIG (and SIGXFSZ) instead, another error path. Skipped, saying why,
where mounting is not allowed."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import SAMPLES

SAFETY = 300  # seconds: a safety net against a hang, never the assertion


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=env, timeout=SAFETY
    )


def _in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """The typer app as the console script runs it for every command but `report`, without a new process."""
    r = CliRunner().invoke(app, list(args), prog_name="stallscan", env={"NO_COLOR": "1", "COLUMNS": "200"})
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def _big_transcript(path: Path, mb: int) -> None:
    """Claude Code records with incompressible texts (random hex): the database grows about as the file."""
    rng = random.Random(3)
    lines = [json.loads(x) for x in (SAMPLES / "claude-code" / "session.jsonl").read_text().splitlines() if x.strip()]
    with open(path, "w", encoding="utf-8") as fh:
        i = 0
        while fh.tell() < mb * 1024 * 1024:
            for rec in lines:
                rec = dict(rec, uuid=f"u{i}-{rng.random()}")
                if isinstance(rec.get("message"), dict):
                    rec["message"] = dict(rec["message"], content=rng.randbytes(400).hex())
                fh.write(json.dumps(rec) + "\n")
            i += 1


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("a full disk needs a small filesystem: mounting a tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a 3 MB tmpfs here ({p.stderr.strip()}): no real full disk to test")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _sessions(db: Path) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT session_id, n_events FROM sessions ORDER BY ALL").fetchall()
    finally:
        con.close()


def _says_disk_full(p: subprocess.CompletedProcess[str]) -> None:
    assert p.returncode == 6, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith("error: no space left to write"), p.stderr
    assert "No space left on device" in p.stderr and "free space" in p.stderr
    assert "fresh --db" not in p.stderr and "damaged" not in p.stderr and "no transaction" not in p.stderr


def test_full_disk_during_ingest_names_the_disk_and_keeps_the_database(tmp_path, small_disk):
    db = small_disk / "s.duckdb"
    assert _in_process("ingest", str(SAMPLES / "claude-code"), "--db", str(db)).returncode == 0  # (set-up)
    before = _sessions(db)
    big = tmp_path / "big.jsonl"
    _big_transcript(big, 8)
    _says_disk_full(_cli("ingest", str(big), "--db", str(db)))
    assert _sessions(db) == before  # what was committed before is intact
    assert _in_process("check", "--db", str(db)).returncode == 0
    # a new database on the full disk: the same error, and no half-written file left behind
    _says_disk_full(_cli("ingest", str(big), "--db", str(small_disk / "new.duckdb")))
    assert not (small_disk / "new.duckdb").exists()


def _fill(disk: Path, leave: int = 0) -> None:
    """Fill the disk up to `leave` free bytes."""
    st = os.statvfs(disk)
    want = max(0, st.f_bavail * st.f_frsize - leave)
    with open(disk / "filler", "wb") as fh:
        try:
            while want > 0:
                fh.write(b"\0" * min(65536, want))
                fh.flush()
                want -= 65536
        except OSError:
            pass


def test_full_export_folder_is_not_a_database_problem(tmp_path, small_disk):
    db = tmp_path / "e.duckdb"
    big = tmp_path / "big.jsonl"
    _big_transcript(big, 4)
    assert _in_process("ingest", str(big), "--db", str(db)).returncode == 0  # (set-up)
    _fill(small_disk, leave=256 * 1024)  # room for the folders and a first parquet block, not for the rest
    p = _cli("export", str(small_disk / "out"), "--db", str(db))
    _says_disk_full(p)
    assert str(small_disk) in p.stderr
    assert _in_process("check", "--db", str(db)).returncode == 0


def test_full_disk_for_a_report_file(tmp_path, small_disk, sample_ingested_file):
    db = tmp_path / "r.duckdb"
    shutil.copy(sample_ingested_file, db)
    _fill(small_disk)
    p = _cli("report", "--db", str(db), "--format", "html", "-o", str(small_disk / "r.html"))
    _says_disk_full(p)


def test_full_disk_while_deriving_the_replay_tables(small_disk, sample_ingested_file):
    """Read commands derive their tables into the database first: a full disk there is a full disk too
    (the clean-up after the failed write once replaced the error)."""
    db = small_disk / "d.duckdb"
    shutil.copy(sample_ingested_file, db)  # sample_logs ingested, nothing derived yet
    _fill(small_disk)
    for args in (("stalls",), ("sweep",), ("report",)):
        _says_disk_full(_cli(*args, "--db", str(db)))


# ------------------------------------------------------------------------------------ corrupted database
@pytest.fixture(scope="module")
def good_db(tmp_path_factory, sample_ingested_file):
    db = tmp_path_factory.mktemp("check") / "good.duckdb"
    shutil.copy(sample_ingested_file, db)
    return db


def _copy(src: Path, dst: Path, zero_at: int | None = None) -> Path:
    shutil.copy(src, dst)
    if zero_at is not None:
        with open(dst, "r+b") as fh:
            fh.seek(zero_at)
            fh.write(b"\0" * 4096)
    return dst


def _text_block_offset(db: Path) -> int:
    """A byte offset inside a data block of events.text, from DuckDB's storage layout (3 header blocks
    of 4 KiB, then blocks of block_size, each starting with its 8-byte checksum)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        block_size = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()[0][0]
        (block,) = con.execute(
            "SELECT min(block_id) FROM pragma_storage_info('events') WHERE column_name = 'text' AND block_id >= 0"
        ).fetchall()[0]
    finally:
        con.close()
    return 3 * 4096 + block * block_size + 8 + 4096


def test_check_passes_a_healthy_database(good_db):
    p = _cli("check", "--db", str(good_db), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["ok"] and {t["table"] for t in out["tables"]} >= {"events", "files", "skipped", "rejects"}
    con = duckdb.connect(str(good_db), read_only=True)
    n = con.execute("SELECT count(*) FROM events").fetchall()[0][0]
    con.close()
    assert next(t["rows"] for t in out["tables"] if t["table"] == "events") == n


def test_zeroed_block_in_events_is_found_by_check(tmp_path, good_db):
    db = _copy(good_db, tmp_path / "blk.duckdb", _text_block_offset(good_db))
    p = _cli("check", "--db", str(db), "--json")
    assert p.returncode == 6 and "Traceback" not in p.stderr, p.stderr
    out = json.loads(p.stdout)  # stdout stays JSON, the error line goes to stderr
    assert not out["ok"]
    assert [t["table"] for t in out["tables"] if t["error"]] == ["events"]
    assert "checksum" in next(t["error"] for t in out["tables"] if t["table"] == "events")
    assert "damaged" in p.stderr and "stallscan ingest PATH --db" in p.stderr
    # a command that reads the block says the same (never "a fresh --db if the file is damaged")
    q = _in_process("sql", "SELECT max(length(text)) FROM events", "--db", str(db))
    assert q.returncode == 6 and "is damaged" in q.stderr and "Traceback" not in q.stderr, q.stderr


@pytest.mark.parametrize("at", [0, 4096])
def test_zeroed_header_is_a_damaged_database_not_a_transcript(tmp_path, good_db, at):
    db = _copy(good_db, tmp_path / "hdr.duckdb", at)
    for args in (("report",), ("sessions",), ("ingest", str(SAMPLES / "codex")), ("check",)):
        p = (_cli if args[0] == "report" else _in_process)(*args, "--db", str(db))
        assert p.returncode == 6, (args, p.returncode, p.stderr)
        assert "is damaged" in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
        assert "stallscan ingest " + str(db) not in p.stderr  # never: ingest the database as a transcript
