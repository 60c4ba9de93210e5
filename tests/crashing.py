"""Crash-test helpers: a Claude-Code shaped corpus (bench/gen.py), ingest subprocesses stopped by the
ingest's failpoint (stallscan/ingest/failpoint.py) and killed there, and the checks after each kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb

from stallscan.ingest.failpoint import EXIT_CODE
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from tests.helpers import ROOT
from tests.hostile import accounting_errors, snapshot

REACHED = "stallscan: failpoint ingest.commit {} reached"


def _gen(out: Path, size: str, files: int = 0, seed: int = 1) -> None:
    args = [sys.executable, str(ROOT / "bench" / "gen.py"), "--format", "claude", "--bytes", size]
    args += ["--out", str(out) + ("/" if files else ""), "--seed", str(seed)]
    if files:
        args += ["--files", str(files)]
    subprocess.run(args, check=True, capture_output=True, timeout=300)


def make_corpus(root: Path, many: str, n_files: int, big: str) -> Path:
    (root / "many").mkdir(parents=True)
    (root / "big").mkdir()
    _gen(root / "many", many, n_files, seed=1)
    _gen(root / "big" / "one.jsonl", big, seed=2)
    return root


def reference(corpus: Path) -> dict[str, Any]:
    """An uninterrupted ingest with the default (64 MB) batches."""
    con = connect(":memory:")
    try:
        ingest_paths(con, [str(corpus)])
        return snapshot(con)
    finally:
        con.close()


def start(corpus: Path, db: Path, batch_bytes: int, failpoint: str = "", commit_rows: int = 1) -> subprocess.Popen[str]:
    env = dict(os.environ, STALLSCAN_BATCH_BYTES=str(batch_bytes), STALLSCAN_COMMIT_ROWS=str(commit_rows))
    env["STALLSCAN_FAILPOINT"] = failpoint
    return subprocess.Popen(
        [sys.executable, "-m", "stallscan", "ingest", str(corpus), "--db", str(db), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def kill_at_commit(
    corpus: Path, db: Path, batch_bytes: int, n: int, action: str = "sleep", commit_rows: int = 1
) -> bool:
    """Run an ingest that stops right after its nth commit and kill it there (SIGKILL once it says it
    reached the failpoint; `exit` leaves by itself). False when the run had fewer commits and finished."""
    p = start(corpus, db, batch_bytes, f"ingest.commit:{n}:{action}", commit_rows)
    assert p.stderr is not None
    reached = False
    for line in p.stderr:  # blocks until the line comes, or the process ends (EOF)
        if line.strip() == REACHED.format(n):
            reached = True
            if action == "sleep":
                p.send_signal(signal.SIGKILL)
            break
    p.stderr.close()
    rc = p.wait(timeout=600)
    if not reached:
        assert rc == 0, f"ingest ended with {rc} before commit {n}"
    else:
        assert rc == (-signal.SIGKILL if action == "sleep" else EXIT_CODE), rc
    return reached


def after_kill(db: Path) -> tuple[int, int]:
    """The database opens (as a user would open it), and no file is half-ingested. Returns progress."""
    con = connect(db)
    try:
        errors = accounting_errors(con)
        assert not errors, errors
        row = con.execute(
            "SELECT count(*) FILTER (WHERE status = 'ok'), coalesce(sum(consumed_bytes), 0) FROM files"
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])
    finally:
        con.close()


def finish(corpus: Path, db: Path, batch_bytes: int) -> dict[str, Any]:
    p = start(corpus, db, batch_bytes)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-2000:]
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert not accounting_errors(con)
        return snapshot(con)
    finally:
        con.close()


def commits_of_a_full_run(corpus: Path, db: Path, batch_bytes: int) -> int:
    """How many commits an uninterrupted run makes, counted by the failpoint itself: the largest n whose
    run reaches commit n (each probe runs on a copy of an empty database, so every probe reads all)."""
    lo, hi = 0, 1
    while kill_at_commit(corpus, db.with_name(f"probe{hi}.duckdb"), batch_bytes, hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if kill_at_commit(corpus, db.with_name(f"probe{mid}.duckdb"), batch_bytes, mid):
            lo = mid
        else:
            hi = mid
    return lo
