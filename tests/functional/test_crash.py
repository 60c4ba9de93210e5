"""Crash safety (issue 7): SIGKILL `stallscan ingest` at many moments of a large ingest.

After every kill the database opens, holds no half-ingested file (every `files` row's line accounting
equals the rows present; a file marked ok was read to its end; no rows without a `files` row), and a
re-run finishes with tables identical (row checksums) to an uninterrupted ingest.

The corpus is Claude-Code shaped (bench/gen.py): many small files (multi-file batches) plus one big
file read in chunks ($STALLSCAN_BATCH_BYTES makes batches and chunks small and $STALLSCAN_COMMIT_ROWS
commits every few batches, so a run has many commits; by default a transaction spans batches up to 4 row groups).
CI: 10+ kills on a ~20 MB corpus, chained (each re-run is killed again). `-m slow`: the 60 MB / 40 files
+ 40 MB corpus, 12 independent kills spread evenly over the run, each followed by a full re-run.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from tests.helpers import ROOT
from tests.hostile import accounting_errors, snapshot


def _gen(out: Path, size: str, files: int = 0, seed: int = 1) -> None:
    args = [
        sys.executable,
        str(ROOT / "bench" / "gen.py"),
        "--format",
        "claude",
        "--bytes",
        size,
        "--out",
        str(out) + ("/" if files else ""),
        "--seed",
        str(seed),
    ]
    if files:
        args += ["--files", str(files)]
    subprocess.run(args, check=True, capture_output=True, timeout=300)


def make_corpus(root: Path, many: str, n_files: int, big: str) -> Path:
    (root / "many").mkdir(parents=True)
    (root / "big").mkdir()
    _gen(root / "many", many, n_files, seed=1)
    _gen(root / "big" / "one.jsonl", big, seed=2)
    return root


def reference(corpus: Path) -> dict:
    """An uninterrupted ingest with the default (64 MB) batches."""
    con = connect(":memory:")
    try:
        ingest_paths(con, [str(corpus)])
        return snapshot(con)
    finally:
        con.close()


def start(corpus: Path, db: Path, batch_bytes: int) -> subprocess.Popen:
    # commit after every ~1,500 events: the small corpora hold ~10,000, so kills land between many commits
    env = dict(os.environ, STALLSCAN_BATCH_BYTES=str(batch_bytes), STALLSCAN_COMMIT_ROWS="1500", NO_COLOR="1")
    return subprocess.Popen(
        [sys.executable, "-m", "stallscan", "ingest", str(corpus), "--db", str(db), "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )


def after_kill(db: Path) -> tuple[int, int]:
    """The database opens (as a user would open it), and no file is half-ingested. Returns progress."""
    con = connect(db)
    try:
        errors = accounting_errors(con)
        assert not errors, errors
        return con.execute(
            "SELECT count(*) FILTER (WHERE status = 'ok'), coalesce(sum(consumed_bytes), 0) FROM files"
        ).fetchone()
    finally:
        con.close()


def finish(corpus: Path, db: Path, batch_bytes: int) -> dict:
    p = start(corpus, db, batch_bytes)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err.decode()[-2000:]
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert not accounting_errors(con)
        return snapshot(con)
    finally:
        con.close()


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    root = make_corpus(tmp_path_factory.mktemp("crash"), "20M", 12, "12M")  # ingest outlasts the kill window
    return root, reference(root)


def test_sigkill_ten_times_during_ingest(small_corpus, tmp_path):
    corpus, ref = small_corpus
    n_files = sum(1 for _ in corpus.rglob("*.jsonl"))
    total = sum(p.stat().st_size for p in corpus.rglob("*.jsonl"))
    batch = 1_500_000  # ~1.5 MB: small files batch 1-2 at a time, the big file in ~6 chunks
    rng = random.Random(7)
    kills, mid_run, rounds, progress = 0, 0, 0, []
    while kills < 10:
        rounds += 1
        db = tmp_path / f"crash{rounds}.duckdb"
        while kills < 10:
            p = start(corpus, db, batch)
            try:
                p.wait(timeout=rng.uniform(0.6, 1.8))  # python + duckdb start-up is ~0.5 s of that
                break  # finished before the kill: the next round starts fresh
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait()
                p.stderr.close()
            kills += 1
            ok, consumed = after_kill(db)
            progress.append((ok, consumed))
            mid_run += 0 < consumed < total
        assert finish(corpus, db, batch) == ref
    print(
        f"\ncrash: {kills} SIGKILLs survived ({mid_run} with the corpus partly ingested) over {rounds} round(s); "
        f"progress (ok files of {n_files}, bytes of {total}): {progress}"
    )
    assert mid_run >= 5, progress  # most kills must land mid-ingest, not before the first commit


@pytest.mark.slow
def test_sigkill_at_spread_moments_large(tmp_path_factory):
    corpus = make_corpus(tmp_path_factory.mktemp("crash_large"), "60M", 40, "40M")
    ref = reference(corpus)
    batch = 8 * 1024 * 1024
    full = tmp_path_factory.mktemp("full") / "full.duckdb"
    t0 = time.perf_counter()
    p = start(corpus, full, batch)
    p.communicate(timeout=600)
    run = time.perf_counter() - t0  # the ingest process alone, start-up included
    assert p.returncode == 0 and finish(corpus, full, batch) == ref
    total = sum(p.stat().st_size for p in corpus.rglob("*.jsonl"))
    kills = []
    for i in range(12):
        # ten kills between start-up (~0.6 s, then the first batch) and about the last commit (~70 % of the run),
        # two late ones: the last batches or the closing checkpoint (all committed to the WAL, the file being written)
        at = 1.0 + (0.7 * run - 1.0) * i / 9 if i < 10 else run * (0.8 if i == 10 else 0.9)
        db = tmp_path_factory.mktemp(f"k{i}") / "k.duckdb"
        p = start(corpus, db, batch)
        try:
            p.wait(timeout=at)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait()
        p.stderr.close()
        ok, consumed = after_kill(db)
        kills.append((round(at, 2), ok, consumed))
        assert finish(corpus, db, batch) == ref, kills
    print(f"\ncrash (large): run {run:.1f} s, {len(kills)} kills (at s, ok files, bytes of {total}): {kills}")
    assert sum(0 < c < total for _, _, c in kills[:10]) >= 8, kills  # most land mid-ingest
