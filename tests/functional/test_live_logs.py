"""Live logs and concurrency.

- a file appended to (in arbitrary byte pieces, lines cut mid-write) while ingest runs again and again;
  the final ingest equals a one-shot ingest of the finished file;
- a file rotated (renamed away, a new file at the same path) or truncated (in place, or copy-truncate)
  between two ingests: the next ingest equals a one-shot ingest of what is on disk;
- a second stallscan process against a database another one is ingesting into gets the documented
  lock message (exit 4, names the holder's PID, says what to do), never a traceback; the ingest, held at a
  commit by the failpoint's `pause` while the others try, then finishes normally.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

import duckdb
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from tests.helpers import ROOT, SAMPLES
from tests.hostile import accounting_errors, snapshot


def one_shot(paths: list[str]) -> dict:
    con = connect(":memory:")
    try:
        ingest_paths(con, paths)
        assert not accounting_errors(con)
        return snapshot(con)
    finally:
        con.close()


@pytest.fixture(scope="module")
def claude_bytes(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("gen") / "live.jsonl"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "gen.py"),
            "--format",
            "claude",
            "--bytes",
            "600K",
            "--out",
            str(out),
            "--seed",
            "5",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out.read_bytes()


def _sources() -> list[bytes]:
    return [
        (SAMPLES / "codex" / "rollout.jsonl").read_bytes(),
        (SAMPLES / "hermes" / "narration_nudged_exhausted.jsonl").read_bytes(),
    ]


@pytest.mark.parametrize("which", ["claude", "codex", "openai_chat"])
def test_appended_while_ingesting_equals_one_shot(tmp_path, claude_bytes, which):
    data = {"claude": claude_bytes, "codex": _sources()[0], "openai_chat": _sources()[1]}[which]
    f = tmp_path / f"live_{which}.jsonl"
    f.write_bytes(b"")
    rng = random.Random(11)
    done = threading.Event()

    def writer():
        pos = 0
        with open(f, "ab", buffering=0) as fh:
            while pos < len(data):
                n = rng.randint(1, max(2, len(data) // 40))  # pieces that cut lines anywhere
                fh.write(data[pos : pos + n])
                pos += n
                time.sleep(rng.uniform(0, 0.01))
        done.set()

    con = connect(tmp_path / "live.duckdb")
    t = threading.Thread(target=writer)
    t.start()
    runs = 0
    while not done.is_set() or runs < 3:
        ingest_paths(con, [str(f)])
        runs += 1
        errors = accounting_errors(con, check_files=False)
        assert not errors, errors
    t.join()
    ingest_paths(con, [str(f)])
    assert not accounting_errors(con)
    assert snapshot(con) == one_shot([str(f)]), runs
    con.close()


def _claude_lines(claude_bytes: bytes) -> list[bytes]:
    return claude_bytes.splitlines(keepends=True)


@pytest.mark.parametrize(
    "case",
    [
        "rotate_shorter",
        "rotate_longer",
        "truncate_in_place",
        "truncate_then_longer",
        "copy_truncate",
        "rewrite_same_size",
    ],
)
def test_rotated_or_truncated_between_ingests(tmp_path, claude_bytes, case):
    lines = _claude_lines(claude_bytes)
    half = len(lines) // 2
    d = tmp_path / "logs"
    d.mkdir()
    f = d / "session.jsonl"
    f.write_bytes(b"".join(lines[:half]))
    con = connect(tmp_path / "r.duckdb")
    ingest_paths(con, [str(d)])
    if case.startswith("rotate"):
        f.rename(d / "session-1.jsonl")  # renamed away (still in the folder)
        new = lines[half : half + 20] if case == "rotate_shorter" else lines[half:]
        f.write_bytes(b"".join(new))
    elif case == "truncate_in_place":
        with open(f, "r+b") as fh:
            fh.truncate(len(b"".join(lines[: half // 3])))
    elif case == "truncate_then_longer":
        with open(f, "wb") as fh:  # truncated, then a new session outgrows the old one
            fh.write(b"".join(lines[half:]))
    elif case == "copy_truncate":  # logrotate copytruncate, then the writer goes on
        shutil.copy(f, d / "session.jsonl.1.jsonl")
        with open(f, "wb") as fh:
            fh.write(b"".join(lines[half : half + 30]))
    elif case == "rewrite_same_size":  # same size, other bytes, mtime moved
        old = f.read_bytes()
        f.write_bytes(old.replace(b'"type":"user"', b'"type":"usex"', 3))
        assert len(f.read_bytes()) == len(old)
    ingest_paths(con, [str(d)])
    errors = accounting_errors(con)
    assert not errors, errors
    assert snapshot(con) == one_shot([str(d)])
    # and one more ingest changes nothing
    res = ingest_paths(con, [str(d)])
    assert res.ingested == 0
    con.close()


# ---------------------------------------------------------------------------------------------------
# concurrency: a second process while one ingests
# ---------------------------------------------------------------------------------------------------
ENV = dict(os.environ, NO_COLOR="1", COLUMNS="200", STALLSCAN_BATCH_BYTES="1000000")


def _cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=ENV, timeout=timeout
    )


CONSISTENT = (
    "SELECT count(*) AS bad FROM files f LEFT JOIN (SELECT file, count(*) AS n FROM rejects GROUP BY file) r "
    "ON r.file = f.path WHERE f.status IN ('ok', 'partial') AND f.n_rejects <> coalesce(r.n, 0)"
)


def test_second_process_gets_lock_message_then_reads(tmp_path):
    """An ingest held at its first commit (failpoint `pause`: commits every 200 events, 1 MB batches) keeps the
    database; every other process meanwhile gets the lock message, never a traceback; once released it ends
    normally, and then readers read. No timing: the probes run while the ingest is known to be paused."""
    corpus = tmp_path / "corpus"
    gen = [sys.executable, str(ROOT / "bench" / "gen.py"), "--format", "claude", "--bytes", "3M", "--files", "4"]
    subprocess.run([*gen, "--out", str(corpus) + "/"], check=True, capture_output=True, timeout=120)
    db = tmp_path / "busy.duckdb"
    env = dict(ENV, STALLSCAN_FAILPOINT="ingest.commit:1:pause", STALLSCAN_COMMIT_ROWS="200")
    ingest = subprocess.Popen(
        [sys.executable, "-m", "stallscan", "ingest", str(corpus), "--db", str(db), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    watchdog = threading.Timer(240, ingest.kill)  # a hang fails the test instead of stalling the run
    watchdog.start()
    try:
        assert ingest.stderr is not None
        line = ingest.stderr.readline()
        assert line == "stallscan: failpoint ingest.commit 1 reached\n", line + ingest.stderr.read()
        probes = [
            ["sql", CONSISTENT, "--format", "json"],
            ["ingest", str(corpus), "--json"],
            ["report", "--format", "json"],
            ["sql", "SELECT count(*) AS n FROM events", "--format", "json"],
        ]
        for args in probes:
            p = _cli(*args, "--db", str(db))
            assert "Traceback" not in p.stderr, p.stderr
            assert p.returncode == 4, (args, p.returncode, p.stderr)
            lines = p.stderr.splitlines()
            assert lines[0] == f"error: database {db} is locked by process {ingest.pid}", p.stderr
            assert lines[1].startswith("hint: ") and "wait" in lines[1]
            assert p.stdout == ""
        assert ingest.poll() is None  # still paused: the probes above met this ingest's lock
        ingest.send_signal(signal.SIGUSR1)
        out, err = ingest.communicate(timeout=240)
    finally:
        watchdog.cancel()
        if ingest.poll() is None:
            ingest.kill()
            ingest.communicate()
    # the ingest itself was never disturbed: it went on after the pause and finished normally
    assert ingest.returncode == 0, err
    assert json.loads(out)["files"] == 4, out
    con = duckdb.connect(str(db), read_only=True)
    assert not accounting_errors(con)
    con.close()
    assert snapshot(duckdb.connect(str(db), read_only=True)) == one_shot([str(corpus)])
    # once it is done, readers read
    p = _cli("sql", CONSISTENT, "--format", "json", "--db", str(db))
    assert p.returncode == 0 and json.loads(p.stdout) == [{"bad": 0}]
