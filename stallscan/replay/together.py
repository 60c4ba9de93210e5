"""The turn-boundary and stall replays at once, on two connections of one database.

The two replays read the same inputs (`events`, `user_labels`) and write disjoint tables, and each spends a
good part of its time on one CPU (the numpy scans, DuckDB's positional reads of their results). A first
replay of a corpus (no stamp of either yet: a first report, the benchmark's fresh database) therefore runs
them side by side, each on its own cursor of the caller's database, after labelling the events once; on one
CPU, with $STALLSCAN_THREADS=1, or when either has a stamp (a repeat is reused or incremental and small),
nothing is done here and the callers replay one after the other as before. The tables written are the same
either way: each replay runs its own code, unchanged, on a connection set up as `connect()` sets one up.

What the two share is guarded: each batched scan takes half of the memory budget's share for its batches
(stallscan.replay.scan_batches.sharing), and derive.run records its stamp under a lock (both stamps go to one table).
One thing is not: DuckDB's `disabled_optimizers` is a setting of the whole database, not of a connection, so
while one replay runs a statement that disables the build-side swap (queries/replay/turn_boundaries.sql,
stall_rounds.sql), the other's statements are planned without it too, and a RESET by one can re-enable it
under the other. That changes plans (their speed), never rows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import duckdb

from stallscan.replay import scan_batches
from stallscan.store import stamps
from stallscan.store.db import cursor, threads


def replay_together(
    con: duckdb.DuckDBPyConnection,
    threshold: float,
    retry_bound: int,
    config: Any = None,
    after: Callable[[], dict[str, Callable[[duckdb.DuckDBPyConnection], object]] | None] | None = None,
) -> dict[str, float] | None:
    """Label the events, then replay turn boundaries (at `threshold`) and stalls (at `retry_bound`, the
    default narrated bound, as the report's sections ask) at once when both are still to be replayed for
    the first time and there are two CPUs; returns each replay's wall seconds, or None when it did not run
    them (the callers' own replay calls then do the work, and `after` is not called).

    after: asked, once both replays are to run here, for work that reads one replay's tables only, to run on
    that replay's cursor right after it ("boundaries", "stalls": the report's sections that read each,
    stallscan.report.build) instead of after both replays; None or an empty answer: nothing more."""
    from stallscan.replay.boundaries import replay_boundaries
    from stallscan.replay.labels import label_events
    from stallscan.replay.stalls import replay_stalls

    label_events(con, config)
    if threads() < 2 or stamps.get(con, "turn_boundaries") or stamps.get(con, "stalls"):
        return None
    jobs: dict[str, Callable[[duckdb.DuckDBPyConnection], object]] = {
        "boundaries": lambda c: replay_boundaries(c, threshold, summary=False),
        "stalls": lambda c: replay_stalls(c, retry_bound=retry_bound, config=config),
    }
    for name, then in ((after() if after else None) or {}).items():
        jobs[name] = _then(jobs[name], then)
    return run_at_once(con, jobs)


def _then(
    first: Callable[[duckdb.DuckDBPyConnection], object], then: Callable[[duckdb.DuckDBPyConnection], object]
) -> Callable[[duckdb.DuckDBPyConnection], object]:
    def both(c: duckdb.DuckDBPyConnection) -> object:
        first(c)
        return then(c)

    return both


def run_at_once(
    con: duckdb.DuckDBPyConnection, jobs: dict[str, Callable[[duckdb.DuckDBPyConnection], object]]
) -> dict[str, float]:
    """Run each job on a cursor of its own, in a thread of its own; returns each job's wall seconds. When one
    fails, the others are interrupted, every thread is joined, the cursors closed, and the first error raised."""
    curs = {name: cursor(con) for name in jobs}
    seconds: dict[str, float] = {}
    errors: list[BaseException] = []

    def work(name: str) -> None:
        t0 = time.perf_counter()
        try:
            jobs[name](curs[name])
        except BaseException as exc:  # re-raised in the caller's thread below
            errors.append(exc)
            for other, c in curs.items():
                if other != name:
                    c.interrupt()
        finally:
            seconds[name] = time.perf_counter() - t0

    threads = [threading.Thread(target=work, args=(name,), name=f"stallscan-{name}") for name in jobs]
    try:
        with scan_batches.sharing(len(jobs)):
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        for c in curs.values():
            c.close()
    if errors:
        raise errors[0]
    return seconds
