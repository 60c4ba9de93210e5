"""Crash safety: SIGKILL `stallscan ingest` right after chosen commits of a multi-batch ingest.

After every kill the database opens, holds no half-ingested file (every `files` row's line accounting
equals the rows present; a file marked ok was read to its end; no rows without a `files` row), and a
re-run finishes with tables identical (row checksums) to an uninterrupted ingest.

The kills are placed by the ingest's failpoint (stallscan/ingest/failpoint.py): with
`STALLSCAN_FAILPOINT=ingest.commit:N:sleep` the process prints one line on stderr right after its Nth
commit and blocks; the test reads that line, then sends SIGKILL. No kill depends on timing, so the same
kills land at the same commits on an idle or a loaded machine.

The corpus is Claude-Code shaped (bench/gen.py): many small files (multi-file batches) plus one big
file read in chunks ($STALLSCAN_BATCH_BYTES makes batches and chunks small; $STALLSCAN_COMMIT_ROWS=1
commits after every batch, so a run has many commits). The functional test chains three kills (ten in
the slow tier) on a ~1.7 MB corpus (each re-run resumes and is killed again); tests/slow/test_crash_large.py kills independent
runs of a ~100 MB corpus at twelve commits spread over the whole run.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.crashing import after_kill, finish, kill_at_commit, make_corpus, reference


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    # (a third of the former 3M + 2M corpus with a third of its batch size: the same ~20 commits, 20 with
    # tests.crashing.commits_of_a_full_run, 19 before; a third of the bytes to generate, ingest and re-read)
    root = make_corpus(tmp_path_factory.mktemp("crash"), "1M", 12, "680K")
    return root, reference(root)


@pytest.mark.parametrize("kills", [3, pytest.param(10, marks=pytest.mark.slow)])  # (ten in the slow tier)
def test_sigkill_during_ingest(small_corpus: tuple[Path, dict[str, Any]], tmp_path: Path, kills: int) -> None:
    corpus, ref = small_corpus
    n_files = sum(1 for _ in corpus.rglob("*.jsonl"))
    total = sum(p.stat().st_size for p in corpus.rglob("*.jsonl"))
    batch = 66_666  # small files batch a few at a time, the big file in ~11 chunks: ~20 commits in all
    rng = random.Random(7)
    db = tmp_path / "crash.duckdb"
    progress: list[tuple[int, int]] = []
    for kill in range(kills):
        # each re-run resumes where the killed one stopped and is killed after 1-2 of its own commits;
        # the 2nd (of 3) or 4th (of 10) kill is an `exit` (the process leaves by itself, nothing closed),
        # the others SIGKILL
        action = "exit" if kill == (1 if kills < 5 else 3) else "sleep"
        assert kill_at_commit(corpus, db, batch, rng.choice((1, 2)), action), f"kill {kill}: ingest ended first"
        progress.append(after_kill(db))
    consumed = [c for _, c in progress]
    # every kill landed mid-ingest (some rows committed, some left) and after at least one more commit
    assert all(0 < c < total for c in consumed), progress
    assert consumed == sorted(set(consumed)), progress
    assert finish(corpus, db, batch) == ref
    print(f"\ncrash: {kills} kills, progress (ok files of {n_files}, bytes of {total}): {progress}")


def test_sigkill_after_the_last_commit(small_corpus: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """The run's last commit is in the WAL but not checkpointed: the kill leaves every file read, the
    next open replays the WAL, and a re-run has nothing to read."""
    corpus, ref = small_corpus
    db = tmp_path / "last.duckdb"
    batch = 170_000  # several batches in one transaction: the run's only commit is its last
    assert kill_at_commit(corpus, db, batch, 1, commit_rows=10**9)
    n_files = sum(1 for _ in corpus.rglob("*.jsonl"))
    total = sum(p.stat().st_size for p in corpus.rglob("*.jsonl"))
    assert after_kill(db) == (n_files, total)
    assert finish(corpus, db, batch) == ref


def test_a_wrong_failpoint_is_refused(
    small_corpus: tuple[Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command in this process (the variable is read when the ingest starts its batches; no process
    is the subject here: the kills above run the real one, with a valid spec)."""
    corpus, _ = small_corpus
    runner = CliRunner()
    for spec in ("ingest.commit:0:sleep", "ingest.commit:2", "ingest.commit:x:exit", "ingest.commit:1:halt"):
        monkeypatch.setenv("STALLSCAN_FAILPOINT", spec)
        r = runner.invoke(app, ["ingest", str(corpus), "--db", str(tmp_path / "w.duckdb"), "--json"])
        assert r.exit_code == 2 and "is not POINT:N:ACTION" in r.stderr, (spec, r.stderr, r.exception)
