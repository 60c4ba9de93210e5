"""stallscan.replay.together.run_at_once shares DuckDB's threads out among the jobs that still run: with two
jobs the setting is one less (each job's own thread counts: with two CPUs each job runs on its own thread alone),
the one left gets it back when the other ends, and the setting is as it was afterwards (also when a job fails)."""

from __future__ import annotations

import threading

import duckdb
import pytest

from stallscan.replay import together


def _threads(c: duckdb.DuckDBPyConnection) -> int:
    return int(c.execute("SELECT current_setting('threads')").fetchone()[0])


@pytest.mark.parametrize("full", [2, 4, 5])
def test_two_jobs_share_the_threads_and_the_last_gets_them_back(full, monkeypatch):
    monkeypatch.delenv("STALLSCAN_THREADS", raising=False)  # (the cursors would set it again)
    con = duckdb.connect()
    con.execute(f"SET threads = {full}")
    seen: dict[str, list[int]] = {"long": [], "short": []}
    long_read, short_done = threading.Event(), threading.Event()

    def short(c: duckdb.DuckDBPyConnection) -> None:
        assert long_read.wait(60)  # (both jobs running)
        seen["short"].append(_threads(c))
        short_done.set()

    def long(c: duckdb.DuckDBPyConnection) -> None:
        seen["long"].append(_threads(c))
        long_read.set()
        assert short_done.wait(60)
        for _ in range(6000):  # (the other job's thread gives its share back right after it returns)
            if _threads(c) == full:
                break
            threading.Event().wait(0.01)
        seen["long"].append(_threads(c))

    together.run_at_once(con, {"long": long, "short": short})
    assert seen["short"] == [full - 1 if full > 1 else 1]
    assert seen["long"] == [full - 1 if full > 1 else 1, full]
    assert _threads(con) == full


def test_one_thread_stays_one_and_a_failure_restores_the_setting(monkeypatch):
    monkeypatch.delenv("STALLSCAN_THREADS", raising=False)
    con = duckdb.connect()
    con.execute("SET threads = 1")
    seen: list[int] = []
    together.run_at_once(con, {"a": lambda c: seen.append(_threads(c)), "b": lambda c: seen.append(_threads(c))})
    assert seen == [1, 1] and _threads(con) == 1

    con.execute("SET threads = 4")

    def fails(c: duckdb.DuckDBPyConnection) -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        together.run_at_once(con, {"a": fails, "b": lambda c: seen.append(_threads(c))})
    assert _threads(con) == 4
