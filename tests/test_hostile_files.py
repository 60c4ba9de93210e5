"""Inputs that broke the run (issue 24): a file name that is not UTF-8, a first line nested 10,000 deep, a
JSON array saved as .jsonl, a truncated gzip / zstd stream, a FIFO as --db. Each through the CLI where it
is about exit codes, hangs or files: a real process for the runs a crash or a hang could end (the first
ingest of a non-UTF-8 name, of a cut gzip, of a FIFO as --db), the typer app in this process for the rest;
the expected counts come from the files themselves (newlines, JSON elements, what zlib decodes), never from
stallscan."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import duckdb
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from tests.helpers import SAMPLES
from tests.hostile import accounting_errors, physical_lines

GOOD = SAMPLES / "claude-code" / "session.jsonl"
SAFETY = 120  # seconds: a safety net against a hang, never the assertion


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=env, timeout=SAFETY
    )


def _in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """The typer app in this process, where the exit code and the message are the subject, not the process."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    r = CliRunner().invoke(app, list(args), prog_name="stallscan", env={"NO_COLOR": "1", "COLUMNS": "200"})
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def _files(db: Path) -> dict[str, tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert not accounting_errors(con)
        return {
            r[0]: r[1:]
            for r in con.execute(
                "SELECT path, source_format, status, n_lines, n_rejects, n_events FROM files"
            ).fetchall()
        }
    finally:
        con.close()


def test_name_not_utf8_is_booked_and_the_rest_is_read(tmp_path):
    """Once a 98-line traceback (UnicodeEncodeError at the Arrow table of paths) and nothing ingested."""
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "ok.jsonl").write_bytes(GOOD.read_bytes())
    bad = os.path.join(os.fsencode(folder), b"bad\xffname.jsonl")
    with open(bad, "wb") as fh:
        fh.write(GOOD.read_bytes())
    db = tmp_path / "t.duckdb"
    p = _cli("ingest", str(folder), "--db", str(db), "--json")
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    assert p.returncode == 3, p.stderr  # an input it could not read: exit 3, as for an unreadable file
    summary = json.loads(p.stdout)
    assert summary["files"] == 2 and summary["ingested"] == 1
    (path, why), *more = summary["unreadable"]
    assert not more and path.endswith("bad\\xffname.jsonl") and "UTF-8" in why
    files = _files(db)
    assert list(files) == [str(folder / "ok.jsonl")]
    assert files[str(folder / "ok.jsonl")][2] == physical_lines(GOOD.read_bytes())
    # the table summary names it too, printable
    q = _in_process("ingest", str(folder), "--db", str(tmp_path / "u.duckdb"))
    assert q.returncode == 3 and "bad\\xffname.jsonl" in q.stderr and "Traceback" not in q.stderr


@pytest.mark.parametrize("depth", [10_000, 30_000])  # (30,000: a first line longer than the 64 KiB head)
def test_first_line_nested_10000_deep_keeps_the_other_lines(con, tmp_path, depth):
    """Once 'unrecognized' as a whole (RecursionError in detection): the valid lines were dropped."""
    good = GOOD.read_bytes()
    f = tmp_path / "deep_first.jsonl"
    f.write_bytes(b'{"a":' * depth + b"1" + b"}" * depth + b"\n" + good)
    res = ingest_paths(con, [str(f)])
    assert res.unrecognized == []
    fmt, status, n_lines, n_rejects, n_events = con.execute(
        "SELECT source_format, status, n_lines, n_rejects, n_events FROM files"
    ).fetchone()
    assert (fmt, status) == ("claude_code", "ok")
    assert n_lines == physical_lines(f.read_bytes()) and n_rejects >= 1
    assert con.execute("SELECT count(*) FROM rejects WHERE line = 1").fetchone()[0] == 1
    assert n_events > 0 and not accounting_errors(con)


@pytest.mark.parametrize("indent", [None, 1])
def test_json_array_saved_as_jsonl_is_read_element_by_element(con, tmp_path, indent):
    """Once 'unrecognized' with n_lines 0: its lines were out of the line equation. The records are the
    sample's lines, so the array's elements must give the events the JSONL file gives."""
    records = [json.loads(line) for line in GOOD.read_text(encoding="utf-8").splitlines() if line.strip()]
    f = tmp_path / "array.jsonl"
    f.write_text(json.dumps(records, indent=indent), encoding="utf-8")
    ingest_paths(con, [str(f)])
    fmt, status, n_lines = con.execute("SELECT source_format, status, n_lines FROM files").fetchone()
    assert (fmt, status, n_lines) == ("claude_code", "ok", len(records))
    assert not accounting_errors(con)
    as_array = con.execute("SELECT role, kind, text FROM events ORDER BY seq").fetchall()
    g = tmp_path / "lines" / "array.jsonl"  # the same records one a line, same name (same session stem)
    g.parent.mkdir()
    g.write_bytes(GOOD.read_bytes())
    other = connect(":memory:")
    ingest_paths(other, [str(g)])
    assert other.execute("SELECT role, kind, text FROM events ORDER BY seq").fetchall() == as_array
    other.close()
    # a cut array is no document: it is read line by line and every line is still accounted
    h = tmp_path / "cut.jsonl"
    h.write_text(json.dumps(records, indent=1)[:-300], encoding="utf-8")
    ingest_paths(con, [str(h)])
    assert not accounting_errors(con)


def _decodable_lines(data: bytes) -> int:
    """Complete lines zlib can inflate from a (truncated) gzip member: the independent count."""
    out = zlib.decompressobj(wbits=31).decompress(data)
    return out.count(b"\n")


def test_truncated_gzip_reads_what_decodes(tmp_path):
    """Once every line lost ('unreadable'). Now the lines before the cut are read and the rest is one reject."""
    good = GOOD.read_bytes() * 20  # (the same uuids again: duplicates, still lines)
    whole = gzip.compress(good)
    cut = len(whole) // 2
    f = tmp_path / "t.jsonl.gz"
    f.write_bytes(whole[:cut])
    expect = _decodable_lines(whole[:cut])
    assert 0 < expect < good.count(b"\n")
    db = tmp_path / "g.duckdb"
    p = _cli("ingest", str(f), "--db", str(db), "--json")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert json.loads(p.stdout)["unreadable"] == []
    fmt, status, n_lines, n_rejects, _ = _files(db)[str(f)]
    assert (fmt, status, n_rejects) == ("claude_code", "ok", 1)
    assert n_lines == expect + 1  # the decoded lines, and the cut line with the lost rest as one reject
    con = duckdb.connect(str(db), read_only=True)
    line, reason = con.execute("SELECT line, reason FROM rejects ORDER BY line DESC LIMIT 1").fetchone()
    con.close()
    assert line == expect + 1 and reason.startswith("gzip stream damaged")
    assert _in_process("ingest", str(f), "--db", str(tmp_path / "s.duckdb"), "--strict").returncode == 1  # a reject


def test_truncated_zstd_reads_what_decodes(tmp_path):
    """zstd decodes whole blocks: a stream cut in half keeps the lines of its complete blocks."""
    pa = pytest.importorskip("pyarrow")
    rng = random.Random(5)
    lines = [json.loads(line) for line in GOOD.read_text(encoding="utf-8").splitlines() if line.strip()]
    data = b"".join(
        json.dumps({**rec, "pad": rng.randbytes(300).hex()}).encode() + b"\n" for _ in range(150) for rec in lines
    )
    whole = pa.compress(data, "zstd", asbytes=True)  # incompressible padding: many blocks
    f = tmp_path / "t.jsonl.zst"
    f.write_bytes(whole[: len(whole) // 2])
    db = tmp_path / "z.duckdb"
    p = _in_process("ingest", str(f), "--db", str(db), "--json")
    assert p.returncode == 0 and "Traceback" not in p.stderr, (p.stdout[-500:], p.stderr)
    fmt, status, n_lines, n_rejects, _ = _files(db)[str(f)]
    assert (fmt, status, n_rejects) == ("claude_code", "ok", 1)
    assert data.count(b"\n") // 4 < n_lines < data.count(b"\n") // 2 + 2  # about the first half, no more


def test_db_naming_a_fifo_is_refused(tmp_path):
    """Once a hang: opening a FIFO waits for a writer. The timeout is only a safety net: the real process
    (ingest) goes first, so a hang fails it before the other commands run in this process."""
    fifo = tmp_path / "db.fifo"
    os.mkfifo(fifo)
    for args in (("ingest", str(GOOD)), ("report",), ("sessions",), ("stalls",), ("check",)):
        p = (_cli if args[0] == "ingest" else _in_process)(*args, "--db", str(fifo))
        assert p.returncode == 3, (args, p.stderr)
        assert p.stderr.startswith("error: ") and "not a regular file" in p.stderr and "Traceback" not in p.stderr


def test_db_named_as_a_scratch_database_is_refused(tmp_path):
    """DuckDB names a database after its file, up to the first dot: a file named as the incremental replays'
    scratch databases once failed its second report (an incremental run) with a Binder error and a hint about a
    damaged file. Now the open refuses it at once, says why, and creates nothing; a name holding it after the first
    dot is a plain database."""
    for name in ("stallscan_inc.duckdb", "STALLSCAN_INC_stalls.v2.db"):
        db = tmp_path / name
        p = _in_process("ingest", str(GOOD), "--db", str(db))
        assert p.returncode == 3, (name, p.stderr)
        assert p.stderr.startswith("error: ") and "is reserved" in p.stderr and "Traceback" not in p.stderr
        assert "hint: rename the file" in p.stderr
        assert not db.exists()
    db = tmp_path / "x.stallscan_inc.duckdb"
    new = tmp_path / "new"
    new.mkdir()
    shutil.copy(SAMPLES / "codex" / "rollout.jsonl", new)
    for args in (("ingest", str(GOOD)), ("report", "--format", "json"), ("report", str(new), "--format", "json")):
        p = _in_process(*args, "--db", str(db))
        assert p.returncode == 0, (args, p.stderr)
