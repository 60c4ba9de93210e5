"""Crash safety on a large corpus (`-m slow`): twelve independent ingests of ~100 MB, each killed right
after its own commit (failpoint ingest.commit:N:sleep), from the first commit to the last; after each kill
the database opens with no half-ingested file, and a re-run equals an uninterrupted ingest."""

from __future__ import annotations

import pytest

from tests.crashing import after_kill, commits_of_a_full_run, finish, kill_at_commit, make_corpus, reference


@pytest.mark.slow
def test_sigkill_at_spread_commits_large(tmp_path_factory: pytest.TempPathFactory) -> None:
    corpus = make_corpus(tmp_path_factory.mktemp("crash_large"), "60M", 40, "40M")
    ref = reference(corpus)
    batch = 4 * 1024 * 1024
    work = tmp_path_factory.mktemp("large")
    commits = commits_of_a_full_run(corpus, work / "x.duckdb", batch)
    assert commits >= 12, commits
    total = sum(p.stat().st_size for p in corpus.rglob("*.jsonl"))
    kills = []
    for i in range(12):  # independent runs, each killed at its own commit, from the first to the last
        at = 1 + (commits - 1) * i // 11
        db = work / f"k{i}.duckdb"
        assert kill_at_commit(corpus, db, batch, at)
        ok, consumed = after_kill(db)
        kills.append((at, ok, consumed))
        assert finish(corpus, db, batch) == ref, kills
    print(f"\ncrash (large): {commits} commits, kills (commit, ok files, bytes of {total}): {kills}")
    assert [c for _, _, c in kills] == sorted({c for _, _, c in kills}), kills  # later commit, more read
    assert kills[-1][2] == total and all(0 < c < total for _, _, c in kills[:-1]), kills
